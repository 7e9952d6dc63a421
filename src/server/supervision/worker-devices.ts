/**
 * Which devices serve processes use (docs/serving.md, "Devices"), CUDA-free so it is unit
 * tested. `--workers 0` builds one engine over every device of `--devices` (the engine resolves
 * them by the one placement rule); `--workers N` gives worker i the device devices[i % n], one
 * engine (one CUDA context) per process.
 */

/** The devices supervised workers are spread over: the list as given; for 'all' every device the machine has, or [0] on a machine without one (the workers then serve without an engine and say why). */
export function spreadDevices(devices: 'all' | readonly number[] | undefined, machineCount: number): number[] {
  if (devices === undefined) return [0];
  if (devices !== 'all') return [...devices];
  const count = machineCount;
  return count > 0 ? Array.from({ length: count }, (_, i) => i) : [0];
}

/** The device of worker slot `index` (0-based): devices[index % n], round robin over the list. */
export function workerDevice(devices: readonly number[], index: number): number {
  if (devices.length === 0) throw new RangeError('workerDevice: the device list is empty');
  return devices[index % devices.length]!;
}
