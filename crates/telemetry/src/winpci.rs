//! The display adapters Windows lists (Windows only): the registry's PCI devices of the Display
//! class, each with its driver and its Configuration Manager problem code and power state. The
//! GPU source reads them before NVML is opened (a sleeping GPU stays asleep); the checklist's
//! Windows facts read them too. Also the small registry reader both use ([`Key`]).

use windows_sys::Win32::Devices::DeviceAndDriverInstallation::{
    CM_Get_DevNode_PropertyW, CM_Get_DevNode_Status, CM_LOCATE_DEVNODE_NORMAL, CM_Locate_DevNodeW, DN_HAS_PROBLEM,
};
use windows_sys::Win32::Devices::Properties::DEVPKEY_Device_PowerData;
use windows_sys::Win32::System::Registry::{
    HKEY, HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE, KEY_READ, RRF_RT_ANY, RRF_RT_REG_DWORD, RRF_RT_REG_SZ, RegCloseKey,
    RegEnumKeyExW, RegEnumValueW, RegGetValueW, RegOpenKeyExW,
};

use super::pci::DisplayAdapter;

/// The NVIDIA GPUs' instance ids when every working one sleeps (see
/// [`super::pci::sleeping_nvidia`]); read before NVML is opened.
pub fn sleeping_nvidia() -> Option<Vec<String>> {
    super::pci::sleeping_nvidia(&adapters())
}

/// The Display device class.
const DISPLAY_CLASS: &str = "{4d36e968-e325-11ce-bfc1-08002be10318}";

/// At most this many subkeys or values are read from one key.
pub const MAX_ENTRIES: u32 = 4096;

/// `s` as a NUL-terminated UTF-16 string, for the wide Windows calls.
pub fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(Some(0)).collect()
}

/// The text of a UTF-16 buffer a Windows call filled, up to its first NUL.
pub fn from_wide(buf: &[u16]) -> String {
    let end = buf.iter().position(|c| *c == 0).unwrap_or(buf.len());
    String::from_utf16_lossy(&buf[..end])
}

/// A predefined registry root a [`Key`] is opened under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// HKEY_LOCAL_MACHINE: the machine's settings.
    LocalMachine,
    /// HKEY_CURRENT_USER: this user's settings.
    CurrentUser,
}

impl Root {
    fn hkey(self) -> HKEY {
        match self {
            Root::LocalMachine => HKEY_LOCAL_MACHINE,
            Root::CurrentUser => HKEY_CURRENT_USER,
        }
    }
}

/// An open registry key, closed when dropped.
pub struct Key(HKEY);

impl Drop for Key {
    fn drop(&mut self) {
        // SAFETY: the handle came from RegOpenKeyExW and is closed once.
        unsafe {
            RegCloseKey(self.0);
        }
    }
}

impl Key {
    /// `path` under a predefined root, opened for reading.
    pub fn open(root: Root, path: &str) -> Option<Key> {
        Key::open_under(root.hkey(), path)
    }

    fn open_under(parent: HKEY, path: &str) -> Option<Key> {
        let p = wide(path);
        let mut k: HKEY = std::ptr::null_mut();
        // SAFETY: `p` is NUL-terminated and outlives the call; `k` receives the handle.
        let rc = unsafe { RegOpenKeyExW(parent, p.as_ptr(), 0, KEY_READ, &mut k) };
        (rc == 0).then_some(Key(k))
    }

    /// `path` under this key, opened for reading.
    pub fn child(&self, path: &str) -> Option<Key> {
        Key::open_under(self.0, path)
    }

    /// The names of its subkeys.
    pub fn subkeys(&self) -> Vec<String> {
        let mut out = Vec::new();
        for i in 0..MAX_ENTRIES {
            let mut name = [0u16; 256];
            let mut len = name.len() as u32;
            // SAFETY: `name` holds `len` UTF-16 units; the other out-pointers are optional.
            let rc = unsafe {
                RegEnumKeyExW(
                    self.0,
                    i,
                    name.as_mut_ptr(),
                    &mut len,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                )
            };
            if rc != 0 {
                break;
            }
            out.push(from_wide(&name[..len as usize]));
        }
        out
    }

    /// Its string values: (name, text).
    pub fn string_values(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for i in 0..MAX_ENTRIES {
            let mut name = [0u16; 1024];
            let mut name_len = name.len() as u32;
            let mut data = [0u16; 512];
            let mut data_len = (data.len() * 2) as u32;
            let mut kind = 0u32;
            // SAFETY: each buffer's size is passed with it (data in bytes, name in UTF-16 units).
            let rc = unsafe {
                RegEnumValueW(
                    self.0,
                    i,
                    name.as_mut_ptr(),
                    &mut name_len,
                    std::ptr::null(),
                    &mut kind,
                    data.as_mut_ptr().cast(),
                    &mut data_len,
                )
            };
            // 234: ERROR_MORE_DATA (a value longer than the buffer): skipped.
            if rc == 234 {
                continue;
            }
            if rc != 0 {
                break;
            }
            // 1: REG_SZ, 2: REG_EXPAND_SZ.
            if kind == 1 || kind == 2 {
                out.push((from_wide(&name[..name_len as usize]), from_wide(&data[..(data_len as usize) / 2])));
            }
        }
        out
    }

    /// A string value ("" for the default value).
    pub fn string(&self, value: &str) -> Option<String> {
        let v = wide(value);
        let mut buf = vec![0u16; 1024];
        let mut size = (buf.len() * 2) as u32;
        // SAFETY: `buf` holds `size` bytes; RRF_RT_REG_SZ makes the API refuse other types.
        let rc = unsafe {
            RegGetValueW(
                self.0,
                std::ptr::null(),
                v.as_ptr(),
                RRF_RT_REG_SZ,
                std::ptr::null_mut(),
                buf.as_mut_ptr().cast(),
                &mut size,
            )
        };
        (rc == 0).then(|| from_wide(&buf)).filter(|s| !s.is_empty())
    }

    /// A DWORD value.
    pub fn dword(&self, value: &str) -> Option<u32> {
        let v = wide(value);
        let mut data = 0u32;
        let mut size = 4u32;
        // SAFETY: `data` is 4 bytes and `size` says so; RRF_RT_REG_DWORD refuses other types.
        let rc = unsafe {
            RegGetValueW(
                self.0,
                std::ptr::null(),
                v.as_ptr(),
                RRF_RT_REG_DWORD,
                std::ptr::null_mut(),
                (&mut data as *mut u32).cast(),
                &mut size,
            )
        };
        (rc == 0).then_some(data)
    }

    /// Whether the key has a value of this name, of any type.
    pub fn has_value(&self, value: &str) -> bool {
        let v = wide(value);
        // SAFETY: no data buffer: only the value's existence is asked for.
        let rc = unsafe {
            RegGetValueW(
                self.0,
                std::ptr::null(),
                v.as_ptr(),
                RRF_RT_ANY,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        rc == 0
    }
}

/// The device's Configuration Manager problem code (0 = working) and its most recent power state
/// ("D0"-"D3"); `None` when it is not present.
fn device_state(instance_id: &str) -> Option<(u32, Option<String>)> {
    let id = wide(instance_id);
    let mut node = 0u32;
    // SAFETY: `id` is NUL-terminated; `node` receives the handle.
    if unsafe { CM_Locate_DevNodeW(&mut node, id.as_ptr(), CM_LOCATE_DEVNODE_NORMAL) } != 0 {
        return None;
    }
    let (mut status, mut problem) = (0u32, 0u32);
    // SAFETY: both out-pointers are valid u32s; `node` came from CM_Locate_DevNodeW.
    if unsafe { CM_Get_DevNode_Status(&mut status, &mut problem, node, 0) } != 0 {
        return None;
    }
    // CM_POWER_DATA: PD_Size (u32), then PD_MostRecentPowerState (DEVICE_POWER_STATE: 1 = D0 ...
    // 4 = D3). Read as bytes, so only the field used is interpreted.
    let mut buf = [0u8; 64];
    let (mut kind, mut size) = (0u32, buf.len() as u32);
    // SAFETY: the buffer's size is passed in `size`; `kind` receives the property type.
    let rc =
        unsafe { CM_Get_DevNode_PropertyW(node, &DEVPKEY_Device_PowerData, &mut kind, buf.as_mut_ptr(), &mut size, 0) };
    let power = (rc == 0 && size >= 8)
        .then(|| i32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]))
        .filter(|d| (1..=4).contains(d))
        .map(|d| format!("D{}", d - 1));
    Some((if status & DN_HAS_PROBLEM != 0 { problem } else { 0 }, power))
}

/// The display adapters present: every PCI device of the Display class, its driver from the class
/// key its `Driver` value names, and its problem code.
pub fn adapters() -> Vec<DisplayAdapter> {
    let Some(pci) = Key::open(Root::LocalMachine, "SYSTEM\\CurrentControlSet\\Enum\\PCI") else { return Vec::new() };
    let mut out = Vec::new();
    for dev in pci.subkeys() {
        let Some(dk) = pci.child(&dev) else { continue };
        for inst in dk.subkeys() {
            let Some(ik) = dk.child(&inst) else { continue };
            if !ik.string("ClassGUID").is_some_and(|g| g.eq_ignore_ascii_case(DISPLAY_CLASS)) {
                continue;
            }
            let instance_id = format!("PCI\\{dev}\\{inst}");
            // Devices not present now (a card removed) are not located: left out.
            let Some((problem, power_state)) = device_state(&instance_id) else { continue };
            let driver = ik.string("Driver").and_then(|d| {
                Key::open(Root::LocalMachine, &format!("SYSTEM\\CurrentControlSet\\Control\\Class\\{d}"))
            });
            let desc = ik.string("DeviceDesc").map(|d| d.rsplit(';').next().unwrap_or(&d).to_string());
            out.push(DisplayAdapter {
                name: driver.as_ref().and_then(|k| k.string("DriverDesc")).or(desc).unwrap_or_else(|| dev.clone()),
                instance_id,
                provider: driver.as_ref().and_then(|k| k.string("ProviderName")),
                driver_version: driver.as_ref().and_then(|k| k.string("DriverVersion")),
                driver_date: driver.as_ref().and_then(|k| k.string("DriverDate")),
                problem: Some(problem),
                power_state,
            });
            if out.len() >= 16 {
                return out;
            }
        }
    }
    out
}
