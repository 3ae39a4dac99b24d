;; Base58 digits -> a big number, schoolbook on 32-bit limbs (used by base58.ts for mid-length input).
;; In: digit values 0..57 at [0, n), n <= 4096, most significant first. Out: the number as
;; little-endian u32 limbs from byte 4096 on; returns how many. Five digits at a time: 58^5 < 2^30,
;; so limb * 58^5 + carry < 2^63 fits an i64.
;; encode is the reverse: bytes in at [0, n), most significant first; out, the number in base 58^5
;; as little-endian u32 limbs from byte 4096 on; returns how many. Three bytes at a time: a limb
;; < 58^5 < 2^30 times 2^24, plus the carry, < 2^55.
;; After editing, run `node scripts/build-base58-wasm.mjs` (it writes base58-wasm.generated.ts).
(module
  (memory (export "memory") 1)
  (func (export "decode") (param $n i32) (result i32)
    (local $i i32) (local $end i32) (local $used i32) (local $p i32) (local $stop i32)
    (local $chunk i64) (local $mul i64) (local $carry i64) (local $x i64)
    (block $done
      (loop $chunks
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        ;; the next up to 5 digits
        (local.set $end (i32.add (local.get $i) (i32.const 5)))
        (if (i32.gt_u (local.get $end) (local.get $n)) (then (local.set $end (local.get $n))))
        (local.set $chunk (i64.const 0))
        (local.set $mul (i64.const 1))
        (loop $digits
          (local.set $chunk (i64.add (i64.mul (local.get $chunk) (i64.const 58)) (i64.load8_u (local.get $i))))
          (local.set $mul (i64.mul (local.get $mul) (i64.const 58)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $digits (i32.lt_u (local.get $i) (local.get $end))))
        ;; limbs = limbs * mul + chunk
        (local.set $carry (local.get $chunk))
        (local.set $p (i32.const 4096))
        (local.set $stop (i32.add (i32.const 4096) (i32.shl (local.get $used) (i32.const 2))))
        (block $limbsDone
          (loop $limbs
            (br_if $limbsDone (i32.ge_u (local.get $p) (local.get $stop)))
            (local.set $x (i64.add (i64.mul (i64.load32_u (local.get $p)) (local.get $mul)) (local.get $carry)))
            (i64.store32 (local.get $p) (local.get $x))
            (local.set $carry (i64.shr_u (local.get $x) (i64.const 32)))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (br $limbs)))
        (block $carried
          (loop $grow
            (br_if $carried (i64.eqz (local.get $carry)))
            (i64.store32 (local.get $p) (local.get $carry))
            (local.set $carry (i64.shr_u (local.get $carry) (i64.const 32)))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (local.set $used (i32.add (local.get $used) (i32.const 1)))
            (br $grow)))
        (br $chunks)))
    (local.get $used))
  (func (export "encode") (param $n i32) (result i32)
    (local $i i32) (local $end i32) (local $used i32) (local $p i32) (local $stop i32)
    (local $chunk i64) (local $mul i64) (local $carry i64) (local $x i64)
    (block $done
      (loop $chunks
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $end (i32.add (local.get $i) (i32.const 3)))
        (if (i32.gt_u (local.get $end) (local.get $n)) (then (local.set $end (local.get $n))))
        (local.set $chunk (i64.const 0))
        (local.set $mul (i64.const 1))
        (loop $bytes
          (local.set $chunk (i64.or (i64.shl (local.get $chunk) (i64.const 8)) (i64.load8_u (local.get $i))))
          (local.set $mul (i64.shl (local.get $mul) (i64.const 8)))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $bytes (i32.lt_u (local.get $i) (local.get $end))))
        ;; limbs = limbs * mul + chunk, in base 58^5 = 656356768
        (local.set $carry (local.get $chunk))
        (local.set $p (i32.const 4096))
        (local.set $stop (i32.add (i32.const 4096) (i32.shl (local.get $used) (i32.const 2))))
        (block $limbsDone
          (loop $limbs
            (br_if $limbsDone (i32.ge_u (local.get $p) (local.get $stop)))
            (local.set $x (i64.add (i64.mul (i64.load32_u (local.get $p)) (local.get $mul)) (local.get $carry)))
            (local.set $carry (i64.div_u (local.get $x) (i64.const 656356768)))
            (i64.store32 (local.get $p) (i64.sub (local.get $x) (i64.mul (local.get $carry) (i64.const 656356768))))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (br $limbs)))
        (block $carried
          (loop $grow
            (br_if $carried (i64.eqz (local.get $carry)))
            (i64.store32 (local.get $p) (i64.rem_u (local.get $carry) (i64.const 656356768)))
            (local.set $carry (i64.div_u (local.get $carry) (i64.const 656356768)))
            (local.set $p (i32.add (local.get $p) (i32.const 4)))
            (local.set $used (i32.add (local.get $used) (i32.const 1)))
            (br $grow)))
        (br $chunks)))
    (local.get $used)))
