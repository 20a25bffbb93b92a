/**
 * How much disk the local S3 server takes for a published catalogue, so `npm start` can say it before a first
 * publish and after. Measuring would mean walking every file (4.5 s for the 240,000 files of a 25,000-module
 * catalogue), so it is estimated from what a publish wrote.
 *
 * s3rver keeps each object as three files (its bytes, a metadata JSON and an MD5), each taking at least one
 * 4 KiB block: about 10 kB per object beyond its bytes. Measured at 25,000 generated modules (seed 1):
 * 79,569 objects of 800.6 MB took 1.69 GB (`du`); the estimate below says 1.62 GB. Generated catalogues of
 * 2,000 to 25,000 modules take 66–74 kB per module.
 */

/** Disk per object beyond its bytes: two small files and the last block of the object's own. */
const OVERHEAD_PER_OBJECT = 10_240;

/** Disk per module of a generated catalogue (the 25,000-module figure, rounded up). */
const DISK_PER_MODULE = 68_000;

/**
 * About how much disk s3rver takes for `objects` objects of `bytes` bytes.
 * @example localDiskFor(79_569, 800_578_148) // → 1_615_324_708 (≈ 1.6 GB)
 */
export function localDiskFor(objects: number, bytes: number): number {
  return bytes + objects * OVERHEAD_PER_OBJECT;
}

/**
 * About how much disk a first publish of `modules` modules takes in s3rver, before anything is rendered.
 * @example localDiskForModules(25_000) // → 1_700_000_000 (≈ 1.7 GB)
 */
export function localDiskForModules(modules: number): number {
  return modules * DISK_PER_MODULE;
}
