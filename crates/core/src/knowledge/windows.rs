//! NVIDIA's driver on Windows: its version as the driver files carry it.

/// NVIDIA's version from a Windows driver file version: `31.0.15.5222` → `552.22` (the last five
/// digits of the third field's last digit and the four-digit fourth field).
pub fn windows_driver_version(file_version: &str) -> Option<String> {
    let parts: Vec<&str> = file_version.trim().split('.').collect();
    if parts.len() != 4 || !parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())) {
        return None;
    }
    let build: u64 = parts[2].parse().ok()?;
    let revision: u64 = parts[3].parse().ok()?;
    let s = format!("{build}{revision:04}");
    let last5 = s.get(s.len().checked_sub(5)?..)?;
    Some(format!("{}.{}", &last5[..3], &last5[3..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_driver_versions() {
        assert_eq!(windows_driver_version("31.0.15.5222").as_deref(), Some("552.22"));
        assert_eq!(windows_driver_version("32.0.15.6094").as_deref(), Some("560.94"));
        assert_eq!(windows_driver_version("9.18.13.4788").as_deref(), Some("347.88"));
        assert_eq!(windows_driver_version("garbage"), None);
        assert_eq!(windows_driver_version("1.2.3"), None);
    }
}
