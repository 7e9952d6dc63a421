/**
 * The runtime's core classes as types, for the files those classes are built from.
 *
 * A Device owns its Context and creates Streams; a Context names its Device; a Stream records
 * Events and an Event is recorded on a Stream; a Module makes Kernels and a Kernel names its
 * Module; a DeviceBuffer copies from another device's buffer through memory/peer-copy.ts, which
 * takes DeviceBuffers. Naming each other's class through `import type` would be an import cycle
 * (the layer check counts type-only imports too, tools/layers.ts), so the lower file names the
 * type here instead. Each interface is empty in this file and completed by the class's own file with
 * `declare module './types.js' { interface Device extends DeviceClass {} }`: the interface then
 * IS the class's instance type (assignable both ways), no cast, no runtime code.
 */

/** A `Device` (src/runtime/device.ts completes this interface). */
export interface Device {}
/** A `Context` (src/runtime/context.ts completes this interface). */
export interface Context {}
/** A `Stream` (src/runtime/stream.ts completes this interface). */
export interface Stream {}
/** A `Module` (src/runtime/module.ts completes this interface). */
export interface Module {}
/** A `DeviceBuffer` of any dtype (src/runtime/memory/device-buffer.ts completes this interface). */
export interface DeviceBuffer {}
