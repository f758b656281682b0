//! `exp` for the cost draws, in plain Rust: a lognormal draw is `median · exp(σ·z)`, and the
//! libm `exp` was a fifth of a run's instructions. This one is table-driven (2^(j/64), j < 64)
//! with a degree-5 polynomial on |r| ≤ ln 2 / 128, about a third of the instructions, within
//! 1 ulp of the exact value. It also makes results independent of the host's libm: glibc picks an
//! FMA or a non-FMA `exp` at run time, so the same seed could round a cost differently on two
//! machines; this has no such choice (no FMA, no platform-dependent operations).

/// 2^(j/64) for j in 0..64, correctly rounded (computed with 50-digit decimal arithmetic).
#[allow(clippy::approx_constant)] // entry 32 is 2^(1/2), correctly rounded like the rest
const TWO_J_64: [f64; 64] = [
    1.0,
    1.0108892860517005,
    1.0218971486541166,
    1.0330248790212284,
    1.0442737824274138,
    1.0556451783605572,
    1.0671404006768237,
    1.0787607977571199,
    1.0905077326652577,
    1.102382583307841,
    1.1143867425958924,
    1.1265216186082418,
    1.1387886347566916,
    1.1511892299529827,
    1.1637248587775775,
    1.1763969916502812,
    1.189207115002721,
    1.202156731452703,
    1.215247359980469,
    1.22848053610687,
    1.241857812073484,
    1.255380757024691,
    1.2690509571917332,
    1.2828700160787783,
    1.2968395546510096,
    1.3109612115247644,
    1.3252366431597413,
    1.339667524053303,
    1.3542555469368927,
    1.3690024229745905,
    1.383909881963832,
    1.3989796725383112,
    1.4142135623730951,
    1.42961333839197,
    1.4451808069770467,
    1.460917794180647,
    1.4768261459394993,
    1.4929077282912648,
    1.5091644275934228,
    1.5255981507445384,
    1.5422108254079407,
    1.559004400237837,
    1.5759808451078865,
    1.593142151342267,
    1.6104903319492543,
    1.6280274218573478,
    1.645755478153965,
    1.6636765803267364,
    1.681792830507429,
    1.7001063537185235,
    1.718619298122478,
    1.7373338352737062,
    1.7562521603732995,
    1.7753764925265212,
    1.7947090750031072,
    1.8142521755003989,
    1.8340080864093424,
    1.8539791250833855,
    1.8741676341103,
    1.8945759815869656,
    1.9152065613971474,
    1.9360617934922943,
    1.9571441241754002,
    1.978456026387951,
];

/// 64 / ln 2.
const INV_STEP: f64 = 92.33248261689366;
/// ln 2 / 64 split in two: the high part has 32 trailing zero bits, so `k · STEP_HI` is exact.
const STEP_HI: f64 = 0.010830417275428772;
const STEP_LO: f64 = 7.420820373486988e-09;
/// 1.5 · 2^52: adding and subtracting it rounds to the nearest integer (no `round` call).
const SHIFT: f64 = 6755399441055744.0;

/// e^x, within 1 ulp; outside |x| ≤ 700 (no cost draw gets there) it defers to `f64::exp`.
#[inline]
pub fn exp(x: f64) -> f64 {
    #[allow(clippy::neg_cmp_op_on_partial_ord)] // true for NaN too
    if !(x.abs() <= 700.0) {
        return x.exp();
    }
    // x = k · ln2/64 + r, |r| <= ln2/128; e^x = 2^(k div 64) · 2^((k mod 64)/64) · e^r.
    let shifted = x * INV_STEP + SHIFT;
    let kf = shifted - SHIFT;
    // In SHIFT's binade one unit is one ulp, so k is the difference of the bit patterns
    // (exact for |k| < 2^51; here |k| < 2^16), without a float-to-int conversion.
    let k = shifted.to_bits() as i64 - SHIFT.to_bits() as i64;
    let r = (x - kf * STEP_HI) - kf * STEP_LO;
    let p = r + r * r * (0.5 + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0))));
    let t = TWO_J_64[(k & 63) as usize];
    let scale = f64::from_bits((((k >> 6) + 1023) as u64) << 52);
    (t + t * p) * scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn within_one_ulp_of_std() {
        let mut r = crate::engine::RngStreams::new(9).stream("exp");
        let xs = (0..200_000).map(|i| (r.f64() - 0.5) * if i % 2 == 0 { 12.0 } else { 1400.0 });
        for x in xs.chain([0.0, -0.0, 1e-300, 700.0, -700.0, 0.5 * std::f64::consts::LN_2 / 64.0]) {
            let (a, b) = (exp(x), x.exp());
            let ulp = b * f64::EPSILON;
            assert!((a - b).abs() <= ulp, "exp({x}) = {a}, std {b}");
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(800.0), f64::INFINITY);
        assert_eq!(exp(-800.0), 0.0);
        assert!(exp(f64::NAN).is_nan());
    }
}
