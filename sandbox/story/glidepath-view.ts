/** What the story reads of Glidepath: release records through its read API, as a script would. */
import type { ReleaseRecord } from '../../src/releases/record/record.js';

export class GlidepathView {
  constructor(
    private readonly url: string,
    private readonly readToken: string,
  ) {}

  async release(pipeline: string, releaseId: string): Promise<ReleaseRecord | undefined> {
    const res = await fetch(`${this.url}/v1/releases/${encodeURIComponent(pipeline)}/${encodeURIComponent(releaseId)}`, { headers: { authorization: `Bearer ${this.readToken}` } });
    if (res.status === 404) return undefined;
    if (!res.ok) throw new Error(`GET release ${pipeline}/${releaseId}: ${res.status} ${await res.text()}`);
    return (await res.json()) as ReleaseRecord;
  }

  async releases(pipeline: string): Promise<ReleaseRecord[]> {
    const res = await fetch(`${this.url}/v1/releases?pipeline=${encodeURIComponent(pipeline)}`, { headers: { authorization: `Bearer ${this.readToken}` } });
    if (!res.ok) throw new Error(`GET releases of ${pipeline}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { releases: ReleaseRecord[] }).releases;
  }
}
