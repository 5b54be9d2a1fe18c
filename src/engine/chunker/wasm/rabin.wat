;; The rolling Rabin fingerprint as a WebAssembly kernel: 64-bit integers hold a degree-53 digest directly.
;;
;; One step is D' = (D*x^8 + in + out*x^512) mod P (XOR is both + and -). Its latency (shift, table load, xor)
;; bounds the speed when every step waits for the last. So the loop advances the dependency chain four bytes at once,
;;   D4 = (D*x^32 + in0*x^24 + in1*x^16 + in2*x^8 + in3 + out0*x^536 + out1*x^528 + out2*x^520 + out3*x^512) mod P,
;; reducing D*x^32 with four independent lookups on D's top four bytes, and computes the fingerprints in between
;; (needed only for the split test) off that chain: D1 = step(D), D2 = two steps at once from D, D3 = step(D2).
;;
;; Memory layout (the JavaScript side writes the tables and the bytes to hash); 53 is P's degree, and a table
;; marked "cancel" also holds b*x^n itself (cut to 64 bits), so one XOR clears b where a left shift put it:
;;       0..2047   leave:   b*x^512 mod P   (byte b leaving the 64-byte window as a new byte comes in)
;;    2048..4095   leave8:  b*x^520 mod P   (the same, followed by 1 more byte)
;;    4096..6143   leave16: b*x^528 mod P   (followed by 2 more bytes)
;;    6144..8191   leave24: b*x^536 mod P   (followed by 3 more bytes)
;;    8192..10239  mod53:   b*x^53 mod P, cancel   (the byte a 1-byte shift pushed above x^52)
;;   10240..12287  mod61:   b*x^61 mod P, cancel   (the top byte after a 2-byte shift)
;;   12288..14335  mod69:   b*x^69 mod P           (bytes shifted past bit 63 are gone: nothing to cancel)
;;   14336..16383  mod77:   b*x^77 mod P
;;   16384..16447  window: the 64 bytes hashed before the current batch, oldest first
;;   16448..       the batch to hash. As the window sits right before it, the byte leaving the window when byte i
;;                 comes in is always at 16384 + i, whether it came from an earlier batch or this one.
(module
  (memory (export "memory") 5)

  (global $digest (mut i64) (i64.const 0))

  ;; Start a chunk: zero fingerprint over a window of zero bytes.
  (func (export "reset")
    (global.set $digest (i64.const 0))
    (memory.fill (i32.const 16384) (i32.const 0) (i32.const 64)))

  ;; table offset of the digest's top byte (bits 45..52)
  (func $top (param $d i64) (result i32)
    (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $d) (i64.const 45))) (i32.const 3)))

  ;; table offset of the digest's byte at bits ($shift + 3)..($shift + 10)
  (func $byteAt (param $d i64) (param $shift i64) (result i32)
    (i32.and (i32.wrap_i64 (i64.shr_u (local.get $d) (local.get $shift))) (i32.const 0x7f8)))

  (func $splits (param $d i64) (result i32)
    (i32.eqz (i32.and (i32.wrap_i64 (local.get $d)) (i32.const 0xfffff))))

  ;; Rolls over the $len bytes of the batch. Returns the count of bytes up to and including the first byte at index
  ;; >= $check after which the low 20 bits of the fingerprint are zero, or -1 once all are hashed (the fingerprint
  ;; and window then carry over to the next batch).
  (func (export "scan") (param $len i32) (param $check i32) (result i32)
    (local $i i32) (local $quadsEnd i32)
    (local $d i64) (local $d1 i64) (local $d2 i64) (local $d3 i64)
    (local $in0 i64) (local $in1 i64) (local $in2 i64) (local $in3 i64)
    (local $out0 i32) (local $out1 i32) (local $out2 i32) (local $out3 i32)
    (local $top i32)
    (local.set $d (global.get $digest))
    (local.set $quadsEnd (i32.and (local.get $len) (i32.const -4)))
    (loop $quads
      (if (i32.lt_u (local.get $i) (local.get $quadsEnd))
        (then
          (local.set $in0 (i64.load8_u offset=16448 (local.get $i)))
          (local.set $in1 (i64.load8_u offset=16449 (local.get $i)))
          (local.set $in2 (i64.load8_u offset=16450 (local.get $i)))
          (local.set $in3 (i64.load8_u offset=16451 (local.get $i)))
          (local.set $out0 (i32.shl (i32.load8_u offset=16384 (local.get $i)) (i32.const 3)))
          (local.set $out1 (i32.shl (i32.load8_u offset=16385 (local.get $i)) (i32.const 3)))
          (local.set $out2 (i32.shl (i32.load8_u offset=16386 (local.get $i)) (i32.const 3)))
          (local.set $out3 (i32.shl (i32.load8_u offset=16387 (local.get $i)) (i32.const 3)))
          (local.set $top (call $top (local.get $d)))
          ;; off the chain: the fingerprints after bytes 0, 1 and 2, for the split test only
          (local.set $d1
            (i64.xor
              (i64.xor (i64.or (i64.shl (local.get $d) (i64.const 8)) (local.get $in0))
                       (i64.load offset=8192 (local.get $top)))
              (i64.load (local.get $out0))))
          (local.set $d2
            (i64.xor
              (i64.xor
                (i64.xor (i64.shl (local.get $d) (i64.const 16))
                         (i64.or (i64.shl (local.get $in0) (i64.const 8)) (local.get $in1)))
                (i64.xor (i64.load offset=10240 (local.get $top))
                         (i64.load offset=8192 (call $byteAt (local.get $d) (i64.const 34)))))
              (i64.xor (i64.load offset=2048 (local.get $out0)) (i64.load (local.get $out1)))))
          (local.set $d3
            (i64.xor
              (i64.xor (i64.or (i64.shl (local.get $d2) (i64.const 8)) (local.get $in2))
                       (i64.load offset=8192 (call $top (local.get $d2))))
              (i64.load (local.get $out2))))
          ;; the chain: four bytes at once
          (local.set $d
            (i64.xor
              (i64.xor
                (i64.xor
                  (i64.shl (local.get $d) (i64.const 32))
                  (i64.or (i64.or (i64.shl (local.get $in0) (i64.const 24)) (i64.shl (local.get $in1) (i64.const 16)))
                          (i64.or (i64.shl (local.get $in2) (i64.const 8)) (local.get $in3))))
                (i64.xor
                  (i64.xor (i64.load offset=14336 (local.get $top))
                           (i64.load offset=12288 (call $byteAt (local.get $d) (i64.const 34))))
                  (i64.xor (i64.load offset=10240 (call $byteAt (local.get $d) (i64.const 26)))
                           (i64.load offset=8192 (call $byteAt (local.get $d) (i64.const 18))))))
              (i64.xor
                (i64.xor (i64.load offset=6144 (local.get $out0)) (i64.load offset=4096 (local.get $out1)))
                (i64.xor (i64.load offset=2048 (local.get $out2)) (i64.load (local.get $out3))))))
          (local.set $i (i32.add (local.get $i) (i32.const 4)))
          (br_if $quads
            (i32.eqz
              (i32.or (i32.or (call $splits (local.get $d1)) (call $splits (local.get $d2)))
                      (i32.or (call $splits (local.get $d3)) (call $splits (local.get $d))))))
          ;; rare: one of the four may be a cut, if the chunk is long enough there
          (if (i32.and (call $splits (local.get $d1)) (i32.gt_u (i32.sub (local.get $i) (i32.const 3)) (local.get $check)))
            (then (return (i32.sub (local.get $i) (i32.const 3)))))
          (if (i32.and (call $splits (local.get $d2)) (i32.gt_u (i32.sub (local.get $i) (i32.const 2)) (local.get $check)))
            (then (return (i32.sub (local.get $i) (i32.const 2)))))
          (if (i32.and (call $splits (local.get $d3)) (i32.gt_u (i32.sub (local.get $i) (i32.const 1)) (local.get $check)))
            (then (return (i32.sub (local.get $i) (i32.const 1)))))
          (if (i32.and (call $splits (local.get $d)) (i32.gt_u (local.get $i) (local.get $check)))
            (then (return (local.get $i))))
          (br $quads))))
    ;; the last 0..3 bytes, one step each
    (loop $singles
      (if (i32.lt_u (local.get $i) (local.get $len))
        (then
          (local.set $d
            (i64.xor
              (i64.xor (i64.or (i64.shl (local.get $d) (i64.const 8)) (i64.load8_u offset=16448 (local.get $i)))
                       (i64.load offset=8192 (call $top (local.get $d))))
              (i64.load (i32.shl (i32.load8_u offset=16384 (local.get $i)) (i32.const 3)))))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (if (i32.and (call $splits (local.get $d)) (i32.gt_u (local.get $i) (local.get $check)))
            (then (return (local.get $i))))
          (br $singles))))
    (global.set $digest (local.get $d))
    ;; the last 64 bytes of window + batch become the next window (memory.copy handles the overlap)
    (memory.copy (i32.const 16384) (i32.add (i32.const 16384) (local.get $len)) (i32.const 64))
    (i32.const -1)))
