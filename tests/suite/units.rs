//! The "Byte units" setting is a value passed to formatting: both choices can be used side by side.

use gpu_doctor::units::{ByteUnits, bytes, bytes_in};

#[test]
fn decimal_and_binary_byte_units() {
    assert_eq!(bytes(1536), "1.5 KiB");
    assert_eq!(bytes(24 * 1024 * 1024 * 1024), "24.0 GiB");
    assert_eq!(bytes_in(1500, ByteUnits::Decimal), "1.5 kB");
    assert_eq!(bytes_in(24 * 1024 * 1024 * 1024, ByteUnits::Decimal), "25.8 GB");
    assert_eq!(bytes_in(999, ByteUnits::Decimal), "999 B");
    assert_eq!(bytes_in(1536, ByteUnits::Binary), "1.5 KiB");
    assert_eq!(bytes(1536), "1.5 KiB");
}
