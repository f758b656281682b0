//! The device benchmark's triggers on arm64.
use super::vm::Vm;
use crate::arch::Trigger;
use crate::config::DeviceVia;
use crate::error::KvmError;

pub struct ArmTrigger;

impl Trigger for ArmTrigger {
    fn fire(&mut self) -> Result<(), KvmError> {
        Err(KvmError::Unsupported("device triggers on arm64 are not wired yet".into()))
    }
    fn resampled(&mut self) -> bool {
        true
    }
}

pub fn create(_vm: &Vm, _via: DeviceVia) -> Result<ArmTrigger, KvmError> {
    Err(KvmError::Unsupported("device triggers on arm64 are not wired yet".into()))
}
