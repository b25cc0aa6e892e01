/**
 * Who a Slack user is in Kubernetes (config `identities`, docs/actions.md): the explicit table
 * first, else the Slack profile's email when `byEmail` is set; Slack user groups add groups. An
 * answer is a value: mapped, with how, or unmapped, with how to get mapped.
 */
import type { IdentitiesConfig } from '../config/identities.js';
import type { KubeIdentity } from '../kube/impersonation.js';
import type { GroupDirectory } from './permissions.js';

/** The email on a Slack user's profile (users.info), cached by the Slack edge; undefined when it shows none. */
export interface SlackProfiles {
  email(userId: string): Promise<string | undefined>;
}

export type IdentityAnswer =
  | { kind: 'mapped'; identity: KubeIdentity; via: 'table' | 'email' }
  | { kind: 'unmapped'; reason: string };

export class IdentityMap {
  constructor(
    private readonly config: IdentitiesConfig,
    private readonly groups: GroupDirectory,
    private readonly profiles?: SlackProfiles,
  ) {}

  async resolve(userId: string): Promise<IdentityAnswer> {
    const listed = this.config.users[userId];
    let base: { identity: KubeIdentity; via: 'table' | 'email' } | undefined;
    if (listed) base = { identity: { user: listed.user, groups: listed.groups }, via: 'table' };
    let emailProblem = '';
    if (!base && this.config.byEmail && this.profiles) {
      try {
        const email = await this.profiles.email(userId);
        if (email) base = { identity: { user: email, groups: this.config.byEmail.groups }, via: 'email' };
        else emailProblem = 'your Slack profile shows no email Glidepath may read, and ';
      } catch (err) {
        const message = (err as Error).message;
        const scope = message.includes('missing_scope') ? '; its Slack app needs the users:read.email scope' : '';
        emailProblem = `Glidepath could not read your Slack profile's email (${message}${scope}), and `;
      }
    }
    if (!base) {
      const table = `identities.users has no entry for ${userId}`;
      const orEmail = this.config.byEmail ? ', or set the email on your Slack profile to your Kubernetes user' : '';
      return { kind: 'unmapped', reason: `you have no Kubernetes identity in Glidepath: ${emailProblem}${table}. Ask a Glidepath admin to add your Kubernetes user (and groups) as identities.users.${userId} in the config${orEmail}` };
    }
    const extra: string[] = [];
    for (const [group, kubeGroups] of Object.entries(this.config.slackGroups)) {
      if (await this.groups.isMember(group, userId)) extra.push(...kubeGroups);
    }
    const groups = [...new Set([...base.identity.groups, ...extra])];
    return { kind: 'mapped', identity: { user: base.identity.user, groups }, via: base.via };
  }
}
