//! Hypervisor policies over the mechanisms: scheduling, idle (WFI/HLT) handling, injection paths.
