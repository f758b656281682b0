//! Floating-point figures that survive a round trip through JSON.
//!
//! JSON has no NaN or infinity, and serde_json writes them as `null`, which no `f64` reads back:
//! a run that produced one would write a result that `compare` and `report` then refuse. Non-finite
//! values are therefore written as the strings `"NaN"`, `"inf"` and `"-inf"` and read back as the
//! same values, so the file says what the model computed and irqlab can read every file it writes.
//! Finite values stay plain JSON numbers (the layout of existing files does not change).
use serde::de::{self, Deserializer, Visitor};
use serde::Serializer;

pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else if v.is_nan() {
        s.serialize_str("NaN")
    } else if *v > 0.0 {
        s.serialize_str("inf")
    } else {
        s.serialize_str("-inf")
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    struct F;
    impl Visitor<'_> for F {
        type Value = f64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a number, or \"NaN\", \"inf\" or \"-inf\"")
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
            Ok(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<f64, E> {
            match v {
                "NaN" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                _ => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
            }
        }
    }
    d.deserialize_any(F)
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize, serde::Deserialize, Debug)]
    struct W(#[serde(with = "super")] f64);

    #[test]
    fn every_value_reads_back_as_written() {
        for v in [0.0, -1.5, 1e300, f64::MIN_POSITIVE, f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
            let s = serde_json::to_string(&W(v)).unwrap();
            let back: W = serde_json::from_str(&s).unwrap();
            assert!(back.0 == v || (v.is_nan() && back.0.is_nan()), "{v} -> {s} -> {}", back.0);
        }
        assert_eq!(serde_json::to_string(&W(f64::NAN)).unwrap(), "\"NaN\"");
        assert_eq!(serde_json::to_string(&W(2.5)).unwrap(), "2.5");
    }

    #[test]
    fn null_and_other_strings_are_errors() {
        assert!(serde_json::from_str::<W>("null").is_err());
        assert!(serde_json::from_str::<W>("\"nan\"").unwrap_err().to_string().contains("\"NaN\""));
    }
}
