export { Communicator, type InitRankDescriptor } from './communicator.js';
export {
  type CollectiveOptions,
  type ReduceOptions,
  type RootOptions,
  type PeerOptions,
} from './collective-options.js';
export { NcclUniqueId, generateUniqueId, NCCL_UNIQUE_ID_BYTES } from './unique-id.js';
export {
  ncclMoveType,
  ncclReduceType,
  ncclOp,
  isReduceOp,
  NCCL_REDUCE_OPS,
  type NcclReduceOp,
  type NcclElementType,
} from './types.js';
export { NcclError, NcclDTypeError, NcclOpError, NcclRangeError, NcclUniqueIdError } from './errors.js';
export { inGroup } from './group.js';
