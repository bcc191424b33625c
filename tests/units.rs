//! The "Byte units" setting switches every byte count to decimal prefixes. It is process-wide, so
//! it is tested alone in this binary.

#[test]
fn decimal_and_binary_byte_units() {
    assert_eq!(gpu_doctor::units::bytes(1536), "1.5 KiB");
    assert_eq!(gpu_doctor::units::bytes(24 * 1024 * 1024 * 1024), "24.0 GiB");
    gpu_doctor::units::set_decimal_bytes(true);
    assert_eq!(gpu_doctor::units::bytes(1500), "1.5 kB");
    assert_eq!(gpu_doctor::units::bytes(24 * 1024 * 1024 * 1024), "25.8 GB");
    assert_eq!(gpu_doctor::units::bytes(999), "999 B");
    gpu_doctor::units::set_decimal_bytes(false);
    assert_eq!(gpu_doctor::units::bytes(1536), "1.5 KiB");
}
