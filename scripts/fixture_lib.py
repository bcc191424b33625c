"""Helpers shared by the fixture generators (scripts/thread-fixtures*.py): pieces of a capture."""
import json, os, shutil, copy
base=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests', 'fixtures')
src=json.load(open(f'{base}/xid-79-fallen-off-bus/capture.json'))
def node(path, major, minor):
    return {"path": path, "char_device": True, "mode": 438, "uid": 0, "gid": 0, "group": "root", "major": major, "minor": minor}

def write(root, rel, text, binary=False):
    p=os.path.join(root,'fs',rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    open(p,'wb' if binary else 'w').write(text)

def gpu_info(i, name, uuid, bus, vram, cc, maxg, power, sm, mem, slow):
    return {"index": i, "name": name, "uuid": uuid, "pci_bus_id": "0000"+bus, "vram_total_bytes": vram,
            "power_limit_default_w": power, "max_sm_clock_mhz": sm, "max_mem_clock_mhz": mem, "max_pcie_gen": maxg,
            "max_pcie_width": 16, "slowdown_temp_c": slow, "compute_capability": cc}

def sample(i, vram, power):
    s=copy.deepcopy(src['meta']['nvml']['samples'][0])
    s.update({"index": i, "health": "Ok", "vram_total_bytes": vram, "vram_used_bytes": 268435456, "vram_free_bytes": vram-268435456,
              "power_limit_w": power, "power_w": 22.5, "temp_c": 36, "pcie_gen": 1, "throttle_mask": 1})
    return s

def facts(i):
    f=copy.deepcopy(src['meta']['nvml']['facts'][0]); f['index']=i; return f

def make(name, source, meta, files, version=1):
    root=f'{base}/{name}'
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    doc={"format": "gpu-doctor-capture", "version": version, "created": "2026-11-30T16:50:00+00:00", "app_version": "0.1.0",
         "source": source, "meta": meta}
    json.dump(doc, open(f'{root}/capture.json','w'), indent=1)
    for rel, text in files.items():
        write(root, rel, text, isinstance(text, bytes))

def nvidia_libs(libdir, version):
    """libcuda and libnvidia-ml as the loader finds them in `libdir`, at driver `version`."""
    return [{"name": n, "path": f"{libdir}/{n}", "real_path": f"{libdir}/{n.rsplit('.so', 1)[0]}.so.{version}", "via": "system"}
            for n in ("libcuda.so.1", "libnvidia-ml.so.1")]

def pci_gpu(addr, cls='0x030000'):
    """The sysfs files of an NVIDIA PCI function at `addr` (VGA 0x030000, 3D controller 0x030200)."""
    return {f'sys/bus/pci/devices/{addr}/class': cls + '\n', f'sys/bus/pci/devices/{addr}/vendor': '0x10de\n'}

