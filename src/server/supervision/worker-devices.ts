/**
 * Which devices serve processes use (docs/serving.md, "Devices"), CUDA-free so it is unit
 * tested. `--devices` (every GPU by default) is the selection; `--workers 0` builds one engine
 * over all of it (the engine resolves it by the one placement rule); `--workers N` gives worker i
 * the device devices[i % n], one engine (one CUDA context) per process.
 */

/**
 * The devices supervised workers are spread over: the list as given; for 'all' every device the
 * machine has (`machineCount`, counted once by the caller). A machine without one has nothing to
 * spread: its one slot is named 0, which no worker resolves (each finds no GPU first, serves
 * without an engine and says why).
 */
export function spreadDevices(devices: 'all' | readonly number[], machineCount: number): number[] {
  if (devices !== 'all') return [...devices];
  return machineCount > 0 ? Array.from({ length: machineCount }, (_, i) => i) : [0];
}

/** The device of worker slot `index` (0-based): devices[index % n], round robin over the list. */
export function workerDevice(devices: readonly number[], index: number): number {
  if (devices.length === 0) throw new RangeError('workerDevice: the device list is empty');
  return devices[index % devices.length]!;
}
