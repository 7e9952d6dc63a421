/** Errors of NCCL use that tscuda catches before NCCL sees the call (NCCL's own failures are NcclError, from tscuda/ffi). */
export { NcclError } from '../../ffi/nccl.js';

/** A buffer's dtype that NCCL cannot carry for this collective (i16 in a reduction, complex max, ...). */
export class NcclDTypeError extends TypeError {
  override readonly name = 'NcclDTypeError';
}

/** An unknown reduction operator, or one NCCL has no meaning for with this dtype. */
export class NcclOpError extends TypeError {
  override readonly name = 'NcclOpError';
}

/** A rank, root, peer, size or element count out of range for the communicator or its buffers. */
export class NcclRangeError extends RangeError {
  override readonly name = 'NcclRangeError';
}

/** A string or byte block that is not a 128-byte NCCL unique id. */
export class NcclUniqueIdError extends TypeError {
  override readonly name = 'NcclUniqueIdError';
}
