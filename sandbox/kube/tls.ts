/**
 * The stand-in's fixed self-signed certificate for 127.0.0.1 (kubectl sends a bearer token only
 * over https). Sandbox material, never shipped with the product.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** sandbox/kube/tls next to this module, or found from the repository root. */
function tlsDirectory(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  if (existsSync(join(dir, 'tls'))) return join(dir, 'tls');
  for (let i = 0; i < 6; i++, dir = dirname(dir)) {
    const candidate = join(dir, 'sandbox', 'kube', 'tls');
    if (existsSync(candidate)) return candidate;
  }
  throw new Error('sandbox TLS certificate (sandbox/kube/tls) not found');
}

export function sandboxCertificate(): { cert: string; key: string } {
  const dir = tlsDirectory();
  return { cert: readFileSync(join(dir, 'sandbox-cert.pem'), 'utf8'), key: readFileSync(join(dir, 'sandbox-key.pem'), 'utf8') };
}
