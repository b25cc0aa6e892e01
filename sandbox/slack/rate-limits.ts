/**
 * Slack's rate limits as the stand-in enforces them: token buckets keyed by method (and channel
 * for chat.postMessage), on an injectable clock. Numbers from https://api.slack.com/docs/rate-limits:
 * about one message per second per channel with short bursts; chat.update is Tier 3 (50+/min).
 */
export interface BucketSpec {
  /** Tokens available at once (the burst). */
  burst: number;
  /** Tokens added per second. */
  perSecond: number;
}

export interface StandInLimits {
  postMessagePerChannel: BucketSpec;
  /** Per method, per workspace. */
  methods: Record<string, BucketSpec>;
}

export const SLACK_LIMITS: StandInLimits = {
  postMessagePerChannel: { burst: 4, perSecond: 1 },
  methods: {
    'chat.postMessage': { burst: 100, perSecond: 100 },
    'chat.update': { burst: 50, perSecond: 50 / 60 },
    'chat.postEphemeral': { burst: 100, perSecond: 100 / 60 },
    'views.publish': { burst: 100, perSecond: 100 / 60 },
    'views.open': { burst: 100, perSecond: 100 / 60 },
    'conversations.info': { burst: 100, perSecond: 100 / 60 },
    // Tier 3 for internal apps (Glidepath is installed from its own manifest); Tier 1 only for
    // commercially distributed non-Marketplace apps since 2025-05-29.
    'conversations.history': { burst: 50, perSecond: 50 / 60 },
    'conversations.replies': { burst: 50, perSecond: 50 / 60 },
    'users.info': { burst: 100, perSecond: 100 / 60 },
    'usergroups.users.list': { burst: 50, perSecond: 50 / 60 },
    'auth.test': { burst: 100, perSecond: 100 / 60 },
  },
};

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private limits: StandInLimits,
    private readonly now: () => number,
  ) {}

  setLimits(limits: StandInLimits): void {
    this.limits = limits;
    this.buckets.clear();
  }

  /** Takes a token; returns 0 when allowed, or the seconds to wait (the Retry-After). */
  take(method: string, channel: string | undefined): number {
    const checks: [string, BucketSpec][] = [];
    const spec = this.limits.methods[method];
    if (spec) checks.push([method, spec]);
    if (method === 'chat.postMessage' && channel) checks.push([`${method}:${channel}`, this.limits.postMessagePerChannel]);
    const now = this.now();
    const refilled = checks.map(([key, s]) => {
      const b = this.buckets.get(key) ?? { tokens: s.burst, at: now };
      const tokens = Math.min(s.burst, b.tokens + ((now - b.at) / 1000) * s.perSecond);
      return { key, s, tokens };
    });
    let waitSeconds = 0;
    for (const r of refilled) {
      if (r.tokens < 1) waitSeconds = Math.max(waitSeconds, Math.ceil((1 - r.tokens) / r.s.perSecond));
    }
    for (const r of refilled) {
      this.buckets.set(r.key, { tokens: waitSeconds > 0 ? r.tokens : r.tokens - 1, at: now });
    }
    return waitSeconds;
  }
}
