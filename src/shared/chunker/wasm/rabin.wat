;; The rolling Rabin fingerprint as a WebAssembly kernel: 64-bit integers hold a degree-53 digest directly.
;; Memory layout (the JavaScript side writes the tables and the bytes to hash):
;;      0..2047  out table, 256 x i64: fingerprint of byte b followed by 63 zero bytes
;;   2048..4095  mod table, 256 x i64: b*x^53 mod P, plus b*x^53 (clears the top byte after a shift)
;;   4096..4159  window: the 64 bytes hashed before the current batch, oldest first
;;   4160..      the batch to hash. Because the window sits right before it, the byte leaving the window when
;;               byte i comes in is always at 4096 + i, whether it came from an earlier batch or this one.
(module
  (memory (export "memory") 5)

  (global $digest (mut i64) (i64.const 0))

  ;; Start a chunk: zero fingerprint over a window of zero bytes.
  (func (export "reset")
    (global.set $digest (i64.const 0))
    (memory.fill (i32.const 4096) (i32.const 0) (i32.const 64)))

  ;; Rolls over the $len bytes of the batch. Returns the count of bytes up to and including the first byte at index
  ;; >= $check after which the low 20 bits of the fingerprint are zero, or -1 once all are hashed (the fingerprint
  ;; and window then carry over to the next batch).
  (func (export "scan") (param $len i32) (param $check i32) (result i32)
    (local $i i32)
    (local $d i64)
    (local.set $d (global.get $digest))
    (loop $next
      (if (i32.lt_u (local.get $i) (local.get $len))
        (then
          ;; remove the leaving byte, then shift the new byte in and reduce by the top byte that overflowed
          (local.set $d
            (i64.xor (local.get $d)
              (i64.load (i32.shl (i32.load8_u offset=4096 (local.get $i)) (i32.const 3)))))
          (local.set $d
            (i64.xor
              (i64.or (i64.shl (local.get $d) (i64.const 8)) (i64.load8_u offset=4160 (local.get $i)))
              (i64.load offset=2048
                (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $d) (i64.const 45))) (i32.const 3)))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $next (i32.and (i32.wrap_i64 (local.get $d)) (i32.const 0xfffff)))
          (br_if $next (i32.le_u (local.get $i) (local.get $check)))
          (return (local.get $i)))))
    (global.set $digest (local.get $d))
    ;; the last 64 bytes of window + batch become the next window (memory.copy handles the overlap)
    (memory.copy (i32.const 4096) (i32.add (i32.const 4096) (local.get $len)) (i32.const 64))
    (i32.const -1)))
