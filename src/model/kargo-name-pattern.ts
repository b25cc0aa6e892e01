/**
 * The two pattern languages of Kargo's name selectors, read as Kargo reads them
 * (akuity/kargo `pkg/pattern/matcher.go`, `ParseNamePattern`):
 *
 * - `glob:` is github.com/bmatcuk/doublestar v4 `Match` with `/` as separator: the whole name must
 *   match; `*` any run of characters but `/`, `?` one such character, `[abc]` `[a-z]` `[^a]` `[!a]`
 *   classes, `{a,b}` alternatives (nested allowed), `\x` the character x. Anything unbalanced
 *   (`[`, `{`, a `}` without `{`, a trailing `\`) is refused, as `doublestar.ValidatePattern` does.
 * - `regex:` (and `regexp:`) is Go's RE2 (`regexp.MatchString`): **not anchored**, a match anywhere
 *   in the name unless the pattern says `^…$`.
 *
 * Both are translated to a JavaScript RegExp. Stage names are DNS-1123 subdomains (lowercase
 * letters, digits, `-`, `.`), and on those the translation matches exactly what Go matches. RE2
 * syntax JavaScript reads differently is translated (`(?i)` flags at the start, `(?P<name>…)`,
 * `\A`, `\z`, `\Q…\E`, `[[:alpha:]]`, `[]a]`); what RE2 refuses (lookaround, backreferences,
 * unknown escapes, repeats over 1000) is refused here too, so a pattern Kargo would refuse never
 * selects anything here. The rest of RE2 that has no plain translation (`\p{…}`, flags after the
 * start, the ungreedy flag `U`) is refused with what to write instead.
 */

export class NamePatternError extends Error {
  override readonly name = 'NamePatternError';
}

function escapeLiteral(c: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(c) ? `\\${c}` : c;
}

function escapeInClass(c: string): string {
  return /[\\\]^[-]/.test(c) ? `\\${c}` : c;
}

/** doublestar v4 `Match(glob, name)` with `/` as separator, as an anchored RegExp. */
export function doublestarToRegExp(glob: string): RegExp {
  let i = 0;
  const fail = (what: string): never => {
    throw new NamePatternError(`${what} (at character ${i + 1} of ${JSON.stringify(glob)})`);
  };
  const sequence = (depth: number): string => {
    let out = '';
    while (i < glob.length) {
      const c = glob[i]!;
      if (depth > 0 && (c === ',' || c === '}')) return out;
      if (c === '}') fail('"}" closes no "{"; write \\} for the character itself');
      i++;
      if (c === '*') {
        // `**` is `*` within one path segment, and a Stage name is one segment.
        while (glob[i] === '*') i++;
        out += '[^/]*';
      } else if (c === '?') out += '[^/]';
      else if (c === '\\') {
        if (i >= glob.length) fail('a "\\" at the end escapes nothing');
        out += escapeLiteral(glob[i++]!);
      } else if (c === '[') out += characterClass();
      else if (c === '{') {
        const alternatives = [sequence(depth + 1)];
        while (glob[i] === ',') {
          i++;
          alternatives.push(sequence(depth + 1));
        }
        if (glob[i] !== '}') fail('"{" is never closed with "}"');
        i++;
        out += `(?:${alternatives.join('|')})`;
      } else out += escapeLiteral(c);
    }
    return out;
  };
  const characterClass = (): string => {
    const negate = glob[i] === '^' || glob[i] === '!';
    if (negate) i++;
    if (i >= glob.length || glob[i] === ']') fail('a character class "[…]" is empty or never closed');
    let items = '';
    let previous: string | undefined;
    while (i < glob.length && glob[i] !== ']') {
      let c = glob[i++]!;
      if (c === '\\') {
        if (i >= glob.length) break;
        c = glob[i++]!;
      } else if (c === '-' && previous !== undefined && i < glob.length && glob[i] !== ']') {
        let hi = glob[i++]!;
        if (hi === '\\' && i < glob.length) hi = glob[i++]!;
        // A range `previous-hi`; doublestar matches nothing for a reversed one.
        items = items.slice(0, -escapeInClass(previous).length);
        if (previous <= hi) items += `${escapeInClass(previous)}-${escapeInClass(hi)}`;
        previous = undefined;
        continue;
      }
      items += escapeInClass(c);
      previous = c;
    }
    if (i >= glob.length) fail('a character class "[…]" is never closed with "]"');
    i++;
    if (items === '') return negate ? '[^/]' : '[]';
    return negate ? `[^/${items}]` : `[${items}]`;
  };
  const body = sequence(0);
  return new RegExp(`^${body}$`);
}

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

/** One escape after `\`, RE2 meaning, JavaScript spelling; `inClass` inside `[…]`. */
function escape(pattern: string, at: number, inClass: boolean): { js: string; next: number } {
  const c = pattern[at];
  if (c === undefined) throw new NamePatternError('a "\\" at the end escapes nothing');
  if (/[0-9]/.test(c)) throw new NamePatternError(`"\\${c}": RE2 has no backreferences, and octal escapes are not accepted here; write \\x41 for a character by its code`);
  if (c === 'x') {
    const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(pattern.slice(at + 1));
    if (braced) {
      const code = parseInt(braced[1]!, 16);
      if (code > 0xffff) throw new NamePatternError(`"\\x{${braced[1]}}": characters beyond \\x{FFFF} cannot be in a Stage name`);
      return { js: `\\u${code.toString(16).padStart(4, '0')}`, next: at + 2 + braced[0].length - 1 };
    }
    if (/^[0-9A-Fa-f]{2}/.test(pattern.slice(at + 1))) return { js: `\\x${pattern.slice(at + 1, at + 3)}`, next: at + 3 };
    throw new NamePatternError('"\\x" needs two hex digits (\\x41) or braces (\\x{41})');
  }
  if (c === 'a') return { js: '\\x07', next: at + 1 };
  if ('ftnrvdDsSwW'.includes(c)) return { js: `\\${c}`, next: at + 1 };
  if (!inClass && 'bB'.includes(c)) return { js: `\\${c}`, next: at + 1 };
  if (!inClass && c === 'A') return { js: '^', next: at + 1 };
  if (!inClass && c === 'z') return { js: '$', next: at + 1 };
  if (c === 'p' || c === 'P') throw new NamePatternError(`"\\${c}": Unicode classes are not accepted here; Stage names are lowercase ASCII, so write a class such as [a-z]`);
  if (/[A-Za-z]/.test(c)) throw new NamePatternError(`"\\${c}" is not an escape RE2 knows`);
  return { js: inClass ? escapeInClass(c) : escapeLiteral(c), next: at + 1 };
}

/** Go RE2 (as `regexp.Compile` reads it, matched with `MatchString`: unanchored) as a JavaScript RegExp. */
export function re2ToRegExp(pattern: string): RegExp {
  let flags = '';
  let i = 0;
  const leading = /^\(\?([a-zA-Z]+)\)/.exec(pattern);
  if (leading) {
    for (const f of leading[1]!) {
      if (f === 'U') throw new NamePatternError('the ungreedy flag (?U) is not accepted here; write lazy repeats such as *? instead');
      if (!'ims'.includes(f)) throw new NamePatternError(`"(?${leading[1]})": "${f}" is not an RE2 flag (flags are i, m, s, U)`);
      if (!flags.includes(f)) flags += f;
    }
    i = leading[0].length;
  }
  let out = '';
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      if (pattern[i + 1] === 'Q') {
        const end = pattern.indexOf('\\E', i + 2);
        const literal = pattern.slice(i + 2, end === -1 ? undefined : end);
        out += [...literal].map(escapeLiteral).join('');
        i = end === -1 ? pattern.length : end + 2;
        continue;
      }
      const e = escape(pattern, i + 1, false);
      out += e.js;
      i = e.next;
    } else if (c === '[') {
      i++;
      out += '[';
      if (pattern[i] === '^') {
        out += '^';
        i++;
      }
      // RE2 reads a `]` right after `[` or `[^` as the character itself.
      if (pattern[i] === ']') {
        out += '\\]';
        i++;
      }
      while (i < pattern.length && pattern[i] !== ']') {
        const posix = /^\[:(\^?)([a-z]+):\]/.exec(pattern.slice(i));
        if (posix) {
          const ranges = POSIX_CLASSES[posix[2]!];
          if (!ranges) throw new NamePatternError(`"[:${posix[2]}:]" is not a POSIX class RE2 knows`);
          if (posix[1]) throw new NamePatternError(`"[:^${posix[2]}:]": negated POSIX classes are not accepted here; write [^[:${posix[2]}:]] instead`);
          out += ranges;
          i += posix[0].length;
        } else if (pattern[i] === '\\') {
          const e = escape(pattern, i + 1, true);
          out += e.js;
          i = e.next;
        } else if (pattern[i] === '[') {
          out += '\\[';
          i++;
        } else out += pattern[i++];
      }
      if (i >= pattern.length) throw new NamePatternError('a character class "[…]" is never closed with "]"');
      out += ']';
      i++;
    } else if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i);
      const named = /^\(\?P?<[A-Za-z0-9_]+>/.exec(rest);
      if (rest.startsWith('(?:')) {
        out += '(?:';
        i += 3;
      } else if (named) {
        // Names change nothing about what matches.
        out += '(?:';
        i += named[0].length;
      } else if (/^\(\?(=|!|<=|<!)/.test(rest)) {
        throw new NamePatternError('lookahead and lookbehind ((?=…), (?!…), (?<=…), (?<!…)) are not RE2: Kargo would refuse the pattern');
      } else if (/^\(\?[a-zA-Z-]+[:)]/.test(rest)) {
        throw new NamePatternError('flags are accepted only at the very start, e.g. regex:(?i)^prod-');
      } else throw new NamePatternError(`"${rest.slice(0, 4)}…" is not a group RE2 knows`);
    } else if (c === '{') {
      const repeat = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
      if (repeat && (Number(repeat[1]) > 1000 || Number(repeat[3] || 0) > 1000)) throw new NamePatternError(`"${repeat[0]}": RE2 repeats at most 1000 times`);
      out += '{';
      i++;
    } else {
      out += c;
      i++;
    }
  }
  try {
    return new RegExp(out, flags);
  } catch (err) {
    throw new NamePatternError((err as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, ''));
  }
}
