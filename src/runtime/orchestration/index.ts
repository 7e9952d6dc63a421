export { StreamPool, type StreamPoolDescriptor, type StreamMetrics } from './stream-pool.js';
export { chooseStream, recommendStrategy, type PoolStrategy, type StreamPurpose, type WorkloadType, type StreamLoad } from './strategy.js';
export { Coordinator, DependencyFailedError, type OperationSpec } from './coordinator.js';
export { CycleError, addEdge, topologicalOrder } from './dag.js';
export { StreamOrderedAllocator, type AllocatorStats } from './allocator.js';
export { sizeClass, MIN_CLASS_BYTES } from './size-classes.js';
