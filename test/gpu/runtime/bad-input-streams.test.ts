// Bad input to the runtime's GPU entry points: devices, streams and events (the table form: test/setup/bad-input-rows.ts).
import { Device } from '../../../src/runtime/device.js';
import { Event } from '../../../src/runtime/event.js';
import { MemoryPool } from '../../../src/runtime/memory/memory-pool.js';
import { DisposedError } from '../../../src/runtime/resource.js';
import { Stream } from '../../../src/runtime/stream.js';
import type { Row } from '../../setup/bad-input-rows.js';
import { describeBadInput, fx, plain } from './bad-input-fixture.js';

const rows: Row[] = [
  // A Device or its ordinal (the one placement rule); anything else, or an ordinal the machine lacks, is refused.
  [
    'pool device string',
    () => new MemoryPool({ device: '0' as never }),
    TypeError,
    /MemoryPool device must be a Device or an ordinal/,
  ],
  ['pool device missing', () => new MemoryPool({ device: 4096 }), RangeError, /4096/],
  ['pool trim -1', () => fx().pool.trim(-1), RangeError, /trim\(keepBytes\) must be a non-negative integer/],
  ['pool trim fraction', () => fx().pool.trim(0.5), RangeError, /trim/],
  ['pool threshold setter', () => (fx().pool.releaseThreshold = 'all' as never), RangeError, /releaseThreshold/],
  // Stream / Event
  [
    'stream priority 1.5',
    () => new Stream({ priority: 1.5 }),
    TypeError,
    /priority must be 'high', 'normal', 'low' or an integer/,
  ],
  ['stream priority word', () => new Stream({ priority: 'urgent' as never }), TypeError, /priority/],
  ['stream descriptor', () => new Stream(5 as never), TypeError, /takes a descriptor object, got number/],
  ['stream nonBlocking', () => new Stream({ nonBlocking: 'yes' as never }), TypeError, /nonBlocking must be a boolean/],
  ['stream waitEvent plain', () => fx().s.waitEvent(plain as never), TypeError, /waitEvent\(event\) must be an Event/],
  ['stream waitEvent null', () => fx().s.waitEvent(null as never), TypeError, /must be an Event, got null/],
  ['stream record plain', () => fx().s.record(plain as never), TypeError, /record\(event\) must be an Event/],
  ['stream query disposed', () => fx().goneStream.query(), DisposedError, /Stream "gone stream" was disposed/],
  ['event record plain', () => fx().untimed.record(plain as never), TypeError, /record\(stream\) must be a Stream/],
  ['event record disposed', () => fx().untimed.record(fx().goneStream), DisposedError, /"gone stream" was disposed/],
  [
    'event elapsed plain',
    () => fx().timed.elapsedSince(plain as never),
    TypeError,
    /elapsedSince\(start\) must be an Event/,
  ],
  ['event elapsed untimed', () => fx().timed.elapsedSince(fx().untimed), TypeError, /timing: true/],
  ['event elapsedMs plain end', () => Event.elapsedMs(fx().timed, plain as never), TypeError, /end must be an Event/],
  [
    'event interprocess timing',
    () => new Event({ interprocess: true, timing: true }),
    TypeError,
    /interprocess events cannot record timing/,
  ],
  ['event descriptor', () => new Event('x' as never), TypeError, /takes a descriptor object/],
  ['event pool release plain', () => fx().events.release(plain as never), TypeError, /must be given an Event/],
  // Device
  ['device -1', () => Device.get(-1), RangeError, /non-negative integer, got -1/],
  ['device 1.5', () => Device.get(1.5), RangeError, /got 1\.5/],
  ['device 999', () => Device.get(999), RangeError, /device 999 does not exist/],
];

describeBadInput('devices, streams and events', rows, 24);
