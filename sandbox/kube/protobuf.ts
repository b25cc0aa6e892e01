/**
 * Just enough of Kubernetes' protobuf encoding to read a SelfSubjectAccessReview, which kubectl's
 * typed client sends as protobuf (`kubectl auth can-i`). Everything else is JSON.
 */
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

type Fields = Map<number, Buffer[]>;

function readVarint(buf: Buffer, pos: number): [number, number] {
  let result = 0;
  let shift = 0;
  for (;;) {
    const byte = buf[pos++];
    if (byte === undefined) throw new Error('truncated protobuf varint');
    result += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [result, pos];
    shift += 7;
  }
}

/** Length-delimited fields by number (varints and fixed-width fields are skipped). */
function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  let pos = 0;
  while (pos < buf.length) {
    const [tag, next] = readVarint(buf, pos);
    pos = next;
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0:
        pos = readVarint(buf, pos)[1];
        break;
      case 1:
        pos += 8;
        break;
      case 5:
        pos += 4;
        break;
      case 2: {
        const [len, start] = readVarint(buf, pos);
        out.set(field, [...(out.get(field) ?? []), buf.subarray(start, start + len)]);
        pos = start + len;
        break;
      }
      default:
        throw new Error(`unsupported protobuf wire type ${tag & 7}`);
    }
  }
  return out;
}

export function isKubernetesProtobuf(body: Buffer): boolean {
  return body.subarray(0, 4).equals(MAGIC);
}

export interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}

/** Decodes `k8s\0` + runtime.Unknown{raw: SelfSubjectAccessReview} into its resourceAttributes. */
export function decodeSelfSubjectAccessReview(body: Buffer): ResourceAttributes {
  const unknown = fields(body.subarray(4));
  const raw = unknown.get(2)?.[0] ?? Buffer.alloc(0);
  const spec = fields(raw).get(2)?.[0] ?? Buffer.alloc(0);
  const attrs = fields(spec).get(1)?.[0];
  if (!attrs) return {};
  const f = fields(attrs);
  const str = (n: number): string | undefined => f.get(n)?.[0]?.toString('utf8');
  return { namespace: str(1), verb: str(2), group: str(3), version: str(4), resource: str(5), subresource: str(6), name: str(7) };
}
