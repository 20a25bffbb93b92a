/**
 * A really small disk for the tests of a full disk (this package's, and npm start's:
 * `@catalogue/local-aws/small-disk`): a tmpfs of a few MiB mounted at a fresh directory (as root: `.ci/run` runs
 * as root, and so does this machine), so writes fail with the kernel's own ENOSPC — never a mock. Where the kernel refuses the mount (not root, or a container without CAP_SYS_ADMIN),
 * {@link SMALL_DISK_REFUSED} says why, and the suites skip with that reason in their titles.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallDisk {
  /** Where it is mounted. */
  path: string;
  /** Fill it with a file of its own until `leave` bytes are free (about: the file system's blocks); the file. */
  fill(leave: number): string;
  /** Bytes free now. */
  free(): number;
  /** Unmount it and remove its mount point. */
  unmount(): void;
}

function run(command: string, args: string[]): string | undefined {
  try {
    execFileSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    return undefined;
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error).trim();
  }
}

/**
 * Mount a tmpfs of `mib` MiB at a fresh directory.
 * @example const disk = mountSmallDisk(8); try { … } finally { disk.unmount(); }
 */
export function mountSmallDisk(mib: number): SmallDisk {
  const path = mkdtempSync(join(tmpdir(), 'cat-small-disk-'));
  const refused = run('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', path]);
  if (refused !== undefined) {
    rmSync(path, { recursive: true, force: true });
    throw new Error(`mounting a ${mib} MiB tmpfs was refused: ${refused}`);
  }
  const free = () => {
    const disk = statfsSync(path);
    return disk.bavail * disk.bsize;
  };
  let fillers = 0;
  return {
    path,
    free,
    fill(leave) {
      const file = join(path, `filler-${++fillers}`);
      const fd = openSync(file, 'w');
      const block = Buffer.alloc(64 * 1024, 0x61);
      try {
        while (free() > leave)
          writeSync(fd, block, 0, Math.min(block.length, Math.max(4096, free() - leave)));
      } catch (error) {
        if ((error as { code?: string }).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
      return file;
    },
    unmount() {
      // Lazily, so a server still closing a file does not keep the mount: it goes once nothing holds it.
      run('umount', ['-l', path]);
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** Why a small disk cannot be mounted here (undefined: it can): tried once, at load. */
export const SMALL_DISK_REFUSED: string | undefined = (() => {
  if (process.platform !== 'linux') return `a tmpfs needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root (.ci/run runs as root)';
  try {
    mountSmallDisk(1).unmount();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
})();
