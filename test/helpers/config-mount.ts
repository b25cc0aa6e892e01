/**
 * A config file mounted the way the kubelet mounts a ConfigMap key: `config.yaml` is a symlink to
 * `..data/config.yaml`, `..data` a symlink to a timestamped folder, and an update writes a new
 * folder, points `..data_tmp` at it and renames `..data_tmp` onto `..data` (one atomic swap; the
 * file `config.yaml` itself is never written), then removes the old folder.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configHash } from '../../src/config/source.js';
import { tempDir } from './temp-dir.js';

export interface ConfigMount {
  /** The config file's path, as GLIDEPATH_CONFIG names it. */
  path: string;
  /** The text mounted now, and its hash. */
  text: string;
  hash: string;
  /** Mounts new text by the kubelet's symlink swap. */
  swap(text: string): void;
}

export function mountConfig(text: string): ConfigMount {
  const dir = tempDir('glidepath-configmap-');
  let version = 0;
  let current = '';
  const write = (content: string): string => {
    const folder = `..2026_12_02_00_00_00.${++version}`;
    mkdirSync(join(dir, folder));
    writeFileSync(join(dir, folder, 'config.yaml'), content);
    return folder;
  };
  current = write(text);
  symlinkSync(current, join(dir, '..data'));
  symlinkSync(join('..data', 'config.yaml'), join(dir, 'config.yaml'));
  const mount: ConfigMount = {
    path: join(dir, 'config.yaml'),
    text,
    hash: configHash(text),
    swap(next) {
      const folder = write(next);
      symlinkSync(folder, join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      rmSync(join(dir, current), { recursive: true, force: true });
      current = folder;
      mount.text = next;
      mount.hash = configHash(next);
    },
  };
  return mount;
}
