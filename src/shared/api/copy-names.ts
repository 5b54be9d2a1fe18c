// The names a DataCopy's step and its dispatcher share: the finalizer held while the copy's snapshot may still be
// forgotten in the destination.
export const copyFinalizer = 'ferry.dev/copy';
