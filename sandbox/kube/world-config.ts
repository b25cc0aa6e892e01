/**
 * A Glidepath config file (YAML) for the sample world, so the sandbox and tests can start Glidepath
 * against it: both clusters through the world's kubeconfig, and one pipeline per way a stage can
 * select its targets (Rollouts by label, ApplicationSet steps, Kargo stages).
 */
export interface WorldConfigOptions {
  kubeconfigPath: string;
  /** Slack channel ids per pipeline (defaults are sandbox ids). */
  channels?: Partial<Record<'checkout' | 'checkoutAppSet' | 'ledger' | 'checkoutKargo', string>>;
  /**
   * Slack principals allowed to approve, abort and promote in every stage of every pipeline, one
   * approver enough (the sandbox, where you are everyone). Default: only the prod stages name
   * approvers, the user group S0SANDBOXSRE.
   */
  approversEverywhere?: string[];
  /** Minutes of silence before a release in flight gets a stall alert (Glidepath's default 20). */
  stallAfterMinutes?: number;
  /**
   * How often the watch relists (a heartbeat of every object it follows; Glidepath's default 10).
   * Default with `stallAfterMinutes`: half of it, so a watched release is heard before it could
   * stall and only a real silence (a lost notification, a watch that is down) stalls.
   */
  watchResyncMinutes?: number;
  /** prod's Kargo API (the world's stand-in): the fleet Stage is target-aware and promoted through it. Its token goes in KARGO_API_TOKENS, never here. */
  kargoApiUrl?: string;
  /**
   * Who the Slack users are in Kubernetes (`identities.users`), and the clusters whose writes are
   * sent as them (`authorization: both`: the stages' approvers and the cluster's RBAC must allow).
   * Default: none, every write is Glidepath's own.
   */
  actAsPeople?: { users: Record<string, { user: string; groups: string[] }>; clusters: ('dev' | 'prod')[] };
}

export function sampleWorldConfig(options: WorldConfigOptions): string {
  const c = { checkout: 'C0SANDBOX1', checkoutAppSet: 'C0SANDBOX2', ledger: 'C0SANDBOX3', checkoutKargo: 'C0SANDBOX4', ...options.channels };
  const approvers = JSON.stringify(['S0SANDBOXSRE']);
  const everywhere = options.approversEverywhere && JSON.stringify(options.approversEverywhere);
  /** A stage's permissions: everyone's when approversEverywhere is set, else its own (if any). */
  const permissions = (own?: string): string | undefined => (everywhere ? `{ approve: ${everywhere}, abort: ${everywhere}, promote: ${everywhere}, requireTwoApprovers: false }` : own);
  const block = (own?: string): string => {
    const p = permissions(own);
    return p ? `\n        permissions: ${p}` : '';
  };
  const flow = (own?: string): string => {
    const p = permissions(own);
    return p ? `, permissions: ${p}` : '';
  };
  const prod = `{ approve: ${approvers}, abort: ${approvers}, promote: ${approvers} }`;
  const path = JSON.stringify(options.kubeconfigPath);
  const actAs = options.actAsPeople;
  const authorization = (cluster: 'dev' | 'prod'): string => (actAs?.clusters.includes(cluster) ? `\n    # Writes are sent as the person (Impersonate-User/Group): the stages' approvers and this cluster's RBAC decide.\n    authorization: both` : '');
  const identities = actAs ? `\n# Who each Slack user is in Kubernetes, for the clusters whose writes are sent as the person.\nidentities:\n  users:\n${Object.entries(actAs.users).map(([id, k]) => `    ${id}: { user: ${JSON.stringify(k.user)}, groups: ${JSON.stringify(k.groups)} }`).join('\n')}` : '';
  const resync = options.watchResyncMinutes ?? (options.stallAfterMinutes ? options.stallAfterMinutes / 2 : undefined);
  return `# Generated for the sandbox's simulated clusters (sandbox/kube/world.ts).
settings:
  pullRequestHosts: [git.example.com]${options.stallAfterMinutes ? `\n  stallAfterMinutes: ${options.stallAfterMinutes}` : ''}${resync ? `\n  watchResyncMinutes: ${resync}` : ''}
# optional: the sandbox's clusters start after Glidepath (their notification engines need its
# URL), so the kubeconfig is not there yet at start-up; Glidepath reads it at the first use.
clusters:
  - name: dev
    kubeconfigContext: dev
    kubeconfigPath: ${path}
    optional: true${authorization('dev')}
  - name: prod
    kubeconfigContext: prod
    kubeconfigPath: ${path}
    optional: true
    argocdNamespaces: [argocd, argocd-apps]${options.kargoApiUrl ? `\n    # Kargo's API: target-aware Stages (fleet) are promoted through it; the token is in KARGO_API_TOKENS.\n    kargoApi: { url: ${JSON.stringify(options.kargoApiUrl)} }` : ''}
    # prod is also watched: no notification carries an ApplicationSet (checkout-appset's RollingSync
    # steps) and Kargo OSS sends none (checkout-kargo is followed from its Stages, Promotions and
    # Freight); the webhooks still carry Rollouts and Argo CD.
    facts: both${authorization('prod')}${identities}
# checkout, checkout-appset and checkout-kargo watch the SAME Rollouts (shop/checkout-*): three
# ways to describe one service's path. The ApplicationSet's RollingSync decides when the prod
# Rollouts move (staging → prod-eu → prod-us, the last step gated), whichever pipeline shows them.
pipelines:
  - name: checkout
    channel: ${c.checkout}
    releaseIdAnnotation: hangar.io/release-id
    stages:
      - name: dev
        cluster: dev
        rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=dev" }${block()}
      - name: staging
        cluster: prod
        rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=staging" }${block()}
      - name: prod-eu
        cluster: prod
        rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=prod,region=eu" }${block(prod)}
      - name: prod-us
        cluster: prod
        rollouts: { namespace: shop, selector: "app.kubernetes.io/part-of=checkout,env=prod,region=us" }${block(prod)}
  - name: checkout-appset
    channel: ${c.checkoutAppSet}
    stages:
      - { name: staging, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 1 }${flow()} }
      - { name: prod-eu, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 2 }${flow()} }
      - { name: prod-us, cluster: prod, applicationSet: { namespace: argocd, name: checkout, step: 3 }${flow(`{ approve: ${approvers} }`)} }
  - name: ledger
    channel: ${c.ledger}
    stages:
      - name: prod
        cluster: prod
        rollouts: { namespace: payments, selector: "app.kubernetes.io/part-of=ledger" }${block()}
  - name: checkout-kargo
    channel: ${c.checkoutKargo}
    stages:
      - { name: dev, cluster: prod, kargo: { project: kargo-checkout, stage: dev }${flow()} }
      - { name: staging, cluster: prod, kargo: { project: kargo-checkout, stage: staging }${flow()} }
      - { name: prod, cluster: prod, kargo: { project: kargo-checkout, stage: prod }${flow(`{ promote: ${approvers} }`)} }
      # A target-aware Stage (Kargo main): its Targets prod-eu and prod-us get one child Promotion each.
      - { name: fleet, cluster: prod, kargo: { project: kargo-checkout, stage: fleet }${flow(`{ promote: ${approvers} }`)} }
`;
}
