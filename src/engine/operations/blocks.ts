// Changed-block tracking as the rest of src/ sees it: the size of the device, the byte ranges a driver reports
// (sorted, merged and clipped here), what a block backup is told about them, and what it says about how it read the
// device.
export { deviceSize } from '../blocks/device-size.ts';
export { normalizeRanges, type ByteRange } from '../blocks/byte-ranges.ts';
export { smallChangedRead, type BlockChanges, type BlockRead } from '../blocks/plan.ts';
