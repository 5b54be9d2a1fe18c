;; The rolling Rabin fingerprint as a WebAssembly kernel: 64-bit integers hold a degree-53 digest directly.
;;
;; One step is D' = (D*x^8 + in + out*x^512) mod P (XOR is both + and -). Its latency (shift, table load, xor)
;; bounds the speed, since every step waits for the last. So the loop advances the dependency chain two bytes at once,
;;   D'' = (D*x^16 + in1*x^8 + in2 + out1*x^520 + out2*x^512) mod P,
;; reducing D*x^16 with two independent lookups on D's top two bytes, and computes the fingerprint between (D',
;; needed only for the split test) off that chain.
;;
;; Memory layout (the JavaScript side writes the tables and the bytes to hash); 53 is P's degree:
;;      0..2047  leave:   b*x^512 mod P   (byte b leaving the 64-byte window as a new byte comes in)
;;   2048..4095  leave8:  b*x^520 mod P   (the same, followed by one more byte)
;;   4096..6143  mod:     b*x^53 mod P xor b*x^53    (folds the byte shifted above x^52 back in)
;;   6144..8191  mod61:   b*x^61 mod P xor b*x^61, the latter cut to 64 bits (top byte after a 2-byte shift)
;;   8192..8255  window: the 64 bytes hashed before the current batch, oldest first
;;   8256..      the batch to hash. As the window sits right before it, the byte leaving the window when byte i
;;               comes in is always at 8192 + i, whether it came from an earlier batch or this one.
;; (D << 16) keeps D's bits 45..47 and the whole second byte; mod xor mod61 clears them while adding the remainder.
(module
  (memory (export "memory") 5)

  (global $digest (mut i64) (i64.const 0))

  ;; Start a chunk: zero fingerprint over a window of zero bytes.
  (func (export "reset")
    (global.set $digest (i64.const 0))
    (memory.fill (i32.const 8192) (i32.const 0) (i32.const 64)))

  ;; One step: fingerprint after byte $i, given the one before it.
  (func $step (param $d i64) (param $i i32) (result i64)
    (i64.xor
      (i64.xor
        (i64.or (i64.shl (local.get $d) (i64.const 8)) (i64.load8_u offset=8256 (local.get $i)))
        (i64.load offset=4096 (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $d) (i64.const 45))) (i32.const 3))))
      (i64.load (i32.shl (i32.load8_u offset=8192 (local.get $i)) (i32.const 3)))))

  ;; Two steps at once: fingerprint after byte $i + 1, given the one before byte $i.
  (func $step2 (param $d i64) (param $i i32) (result i64)
    (i64.xor
      (i64.xor
        (i64.xor
          (i64.shl (local.get $d) (i64.const 16))
          (i64.or
            (i64.shl (i64.load8_u offset=8256 (local.get $i)) (i64.const 8))
            (i64.load8_u offset=8257 (local.get $i))))
        (i64.xor
          (i64.load offset=6144 (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $d) (i64.const 45))) (i32.const 3)))
          (i64.load offset=4096
            (i32.and (i32.wrap_i64 (i64.shr_u (local.get $d) (i64.const 34))) (i32.const 0x7f8)))))
      (i64.xor
        (i64.load offset=2048 (i32.shl (i32.load8_u offset=8192 (local.get $i)) (i32.const 3)))
        (i64.load (i32.shl (i32.load8_u offset=8193 (local.get $i)) (i32.const 3))))))

  (func $splits (param $d i64) (result i32)
    (i32.eqz (i32.and (i32.wrap_i64 (local.get $d)) (i32.const 0xfffff))))

  ;; Rolls over the $len bytes of the batch. Returns the count of bytes up to and including the first byte at index
  ;; >= $check after which the low 20 bits of the fingerprint are zero, or -1 once all are hashed (the fingerprint
  ;; and window then carry over to the next batch).
  (func (export "scan") (param $len i32) (param $check i32) (result i32)
    (local $i i32)
    (local $d i64)
    (local $between i64)
    (local $pairsEnd i32)
    (local.set $d (global.get $digest))
    (local.set $pairsEnd (i32.and (local.get $len) (i32.const -2)))
    (loop $pairs
      (if (i32.lt_u (local.get $i) (local.get $pairsEnd))
        (then
          (local.set $between (call $step (local.get $d) (local.get $i)))
          (local.set $d (call $step2 (local.get $d) (local.get $i)))
          (local.set $i (i32.add (local.get $i) (i32.const 2)))
          (br_if $pairs (i32.eqz (i32.or (call $splits (local.get $between)) (call $splits (local.get $d)))))
          ;; rare: one of the two may be a cut, if the chunk is long enough there
          (if (i32.and (call $splits (local.get $between)) (i32.gt_u (i32.sub (local.get $i) (i32.const 1)) (local.get $check)))
            (then (return (i32.sub (local.get $i) (i32.const 1)))))
          (if (i32.and (call $splits (local.get $d)) (i32.gt_u (local.get $i) (local.get $check)))
            (then (return (local.get $i))))
          (br $pairs))))
    ;; an odd batch ends with one single step
    (if (i32.lt_u (local.get $i) (local.get $len))
      (then
        (local.set $d (call $step (local.get $d) (local.get $i)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (if (i32.and (call $splits (local.get $d)) (i32.gt_u (local.get $i) (local.get $check)))
          (then (return (local.get $i))))))
    (global.set $digest (local.get $d))
    ;; the last 64 bytes of window + batch become the next window (memory.copy handles the overlap)
    (memory.copy (i32.const 8192) (i32.add (i32.const 8192) (local.get $len)) (i32.const 64))
    (i32.const -1)))
