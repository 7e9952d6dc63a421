/**
 * Peer access between devices: what `device.canAccessPeer()`, `enablePeerAccess()` and
 * `disablePeerAccess()` (methods of Device, device.ts) do once `other` is a Device.
 *
 * - canAccessPeer: cuDeviceCanAccessPeer (false for the device itself: there is nothing to enable).
 * - enablePeerAccess: this device's kernels and copies may then read and write `other`'s memory:
 *   cuCtxEnablePeerAccess for memory from cuMemAlloc, and cuMemPoolSetAccess on `other`'s default
 *   and current memory pools (and any pools given) for stream-ordered memory, which
 *   cuCtxEnablePeerAccess does not cover.
 *
 * Copies between devices (`buffer.copyFromPeer()`) are memory/peer-copy.ts.
 */
import { cu } from '../ffi/checked.js';
import { CudaError } from '../ffi/errors.js';
import { CUmemAccess_flags, CUmemLocationType, CUresult, type CUmemoryPool } from '../ffi/generated/types.js';
import { MemoryPool } from './memory/memory-pool.js';
import { expectResource } from './resource.js';
import type { Device } from './types.js';

/** What enablePeerAccess is told. */
export interface PeerAccessOptions {
  /** Memory pools of `other` to open to this device as well (its default and current pools always are). */
  pools?: readonly MemoryPool[] | undefined;
}

/** The driver says these two devices cannot reach each other's memory directly (copies still work, staged through the host). */
export class PeerAccessUnsupportedError extends Error {
  override readonly name = 'PeerAccessUnsupportedError';
}

/** Whether `device` can access `peer`'s memory directly (cuDeviceCanAccessPeer); false for itself. */
export function canAccessPeer(device: Device, peer: Device): boolean {
  if (peer === device) return false;
  return cu().cuDeviceCanAccessPeer(device.handle, peer.handle, `device ${device.ordinal} -> ${peer.ordinal}`) === 1;
}

/** cuMemPoolSetAccess: `device` may read and write what `pool` allocates. */
function openPool(pool: CUmemoryPool, device: Device, during: string): void {
  const desc = {
    location: { type: CUmemLocationType.CU_MEM_LOCATION_TYPE_DEVICE, id: device.handle },
    flags: CUmemAccess_flags.CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
  };
  cu().cuMemPoolSetAccess(pool, desc as never, 1, during);
}

/**
 * Lets `device` access `peer`'s memory: cuCtxEnablePeerAccess (idempotent) and
 * cuMemPoolSetAccess(read-write for `device`) on `peer`'s default and current pools and
 * `options.pools`. Throws PeerAccessUnsupportedError where canAccessPeer is false; a no-op for itself.
 */
export function enablePeerAccess(device: Device, peer: Device, options: PeerAccessOptions = {}): void {
  if (peer === device) return;
  if (!canAccessPeer(device, peer)) {
    throw new PeerAccessUnsupportedError(
      `device ${device.ordinal} cannot access device ${peer.ordinal}'s memory directly (cuDeviceCanAccessPeer is 0): peer copies still work, staged through the host`,
    );
  }
  const pools = options.pools ?? [];
  for (const [i, p] of pools.entries()) {
    expectResource(p, MemoryPool, `enablePeerAccess pools[${i}]`);
    if (p.device !== peer)
      throw new Error(`enablePeerAccess(${peer.ordinal}): pool "${p.label}" belongs to device ${p.device.ordinal}`);
  }
  const during = `device ${device.ordinal} -> device ${peer.ordinal}`;
  const peerContext = peer.context;
  device.context.makeCurrent();
  const api = cu();
  try {
    api.cuCtxEnablePeerAccess(peerContext.handle, 0, during);
  } catch (e) {
    if (!isStatus(e, CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)) throw e;
  }
  const handles = new Set<CUmemoryPool>([api.cuDeviceGetDefaultMemPool(peer.handle, during)]);
  handles.add(api.cuDeviceGetMemPool(peer.handle, during));
  for (const p of pools) handles.add(p.handle);
  for (const h of handles) openPool(h, device, during);
}

/** Undoes cuCtxEnablePeerAccess (pools keep their access). Idempotent. */
export function disablePeerAccess(device: Device, peer: Device): void {
  if (peer === device) return;
  device.context.makeCurrent();
  try {
    cu().cuCtxDisablePeerAccess(peer.context.handle, `device ${device.ordinal} -> device ${peer.ordinal}`);
  } catch (e) {
    if (!isStatus(e, CUresult.CUDA_ERROR_PEER_ACCESS_NOT_ENABLED)) throw e;
  }
}

/** Whether `error` is the driver's `status`: the one answer (already enabled, not enabled) that leaves what was asked true. */
function isStatus(error: unknown, status: number): boolean {
  return error instanceof CudaError && error.library === 'driver' && error.code === status;
}
