# The Windows counterpart of scripts/on-gpu.sh: runs every GPU-side check of gpu-doctor on a Windows
# machine with a real NVIDIA GPU and compares what it reads with Windows' and NVIDIA's own tools.
# It writes the same step files as on-gpu.sh, so scripts/on_gpu_compare.py (when Python is there)
# compares NVML with nvidia-smi exactly as on Linux; the Windows facts (display adapters, problem
# codes, power states, the power plan, the driver package type, TDR events) are compared here with
# Win32_VideoController, Get-PnpDeviceProperty, powercfg, the registry and Get-WinEvent.
#
# NOT YET RUN on a real Windows machine: written from the documentation of the cmdlets it calls.
# The CI only runs the Windows executables under Wine with test-only fake driver libraries
# (packaging/check-wine-gpu.sh). The first run on real Windows is what checks this script too.
#
# Usage (PowerShell 5.1 or 7, no administrator rights needed):
#   powershell -ExecutionPolicy Bypass -File scripts\on-gpu-windows.ps1 [-BinDir DIR] [-Out DIR] [-Burn 12]
#   BinDir  the folder with gpu-doctor-cli.exe (and gpu-doctor.exe), e.g. the unpacked .zip;
#           default: target\release (cargo build --release --bins)
#   Out     folder for every output (default: a new folder under %TEMP%)
# Prints one table of Windows comparisons (and on_gpu_compare.py's when Python is found); exits 1
# when a step failed or a comparison disagrees.
param(
    [string]$BinDir = "",
    [string]$Out = "",
    [int]$Burn = 12
)
$ErrorActionPreference = "Continue"
$here = Split-Path -Parent $PSScriptRoot
if (-not $BinDir) { $BinDir = Join-Path $here "target\release" }
if (-not $Out) { $Out = Join-Path $env:TEMP ("on-gpu-" + (Get-Date -Format "yyyyMMdd-HHmmss")) }
New-Item -ItemType Directory -Force -Path $Out | Out-Null
$cli = Join-Path $BinDir "gpu-doctor-cli.exe"
if (-not (Test-Path $cli)) { Write-Host "on-gpu: $cli is missing"; exit 2 }
$steps = Join-Path $Out "steps.tsv"
Set-Content -Path $steps -Value $null -Encoding utf8
$failed = $false

# step NAME LIMIT_SECS OK_CODES ARGS: runs the CLI with a time limit, stdout to NAME.out, stderr to
# NAME.err, and records exit code and seconds as on-gpu.sh does.
function Step([string]$name, [int]$limit, [string]$ok, [string[]]$cliArgs) {
    $t0 = Get-Date
    $p = Start-Process -FilePath $cli -ArgumentList $cliArgs -NoNewWindow -PassThru `
        -RedirectStandardOutput (Join-Path $Out "$name.out") -RedirectStandardError (Join-Path $Out "$name.err")
    if (-not $p.WaitForExit($limit * 1000)) { $p.Kill(); $rc = 124 } else { $rc = $p.ExitCode }
    $secs = [math]::Round(((Get-Date) - $t0).TotalSeconds, 1)
    Add-Content -Path $steps -Value "$name`t$rc`t$ok`t$secs" -Encoding utf8
    Write-Host "on-gpu: $name exit $rc"
    if (-not ($ok.Split(",") -contains "$rc")) { $script:failed = $true }
}

$smi = Get-Command nvidia-smi.exe -ErrorAction SilentlyContinue
& $cli --version *> (Join-Path $Out "version.out")
if ($smi) {
    & nvidia-smi.exe *> (Join-Path $Out "nvidia-smi.out")
    & nvidia-smi.exe -q *> (Join-Path $Out "nvidia-smi-q.out")
}
Step "info" 30 "0" @("info")
Step "info-json" 30 "0" @("info", "--json")
if ($smi) {
    & nvidia-smi.exe --query-gpu=index,name,uuid,pci.bus_id,driver_version,memory.total,power.default_limit,clocks.max.sm,clocks.max.mem,pcie.link.gen.max,pcie.link.width.max,compute_cap --format=csv,noheader,nounits > (Join-Path $Out "smi-static.csv")
}
Step "check" 60 "0,6,7" @("check")
Step "check-json" 60 "0,6,7" @("check", "--json")
$cap = Join-Path $Out "capture"
Step "capture" 60 "0" @("capture", "--out", "`"$cap`"", "--archive", "`"$(Join-Path $Out 'capture.tar.gz')`"")
Step "check-from" 60 "0,6,7" @("check", "--from", "`"$cap`"", "--json")
Step "check-from-archive" 60 "0,6,7" @("check", "--from", "`"$(Join-Path $Out 'capture.tar.gz')`"", "--json")
Step "monitor-idle" 30 "0" @("monitor", "--json", "--count", "10", "--interval", "1")
if ($smi) {
    & nvidia-smi.exe --query-gpu=index,temperature.gpu,power.draw,power.limit,memory.used,utilization.gpu,clocks.sm,clocks.mem,pcie.link.gen.current,pcie.link.width.current,pstate,fan.speed --format=csv,noheader,nounits > (Join-Path $Out "smi-idle.csv")
}
Step "smoke" 120 "0,6" @("smoke", "--json")
Step "smoke-burn" ($Burn + 90) "0,6" @("smoke", "--json", "--burn", "$Burn")
Step "report-md" 90 "0,6,7" @("report", "--format", "md", "--sample", "3", "--smoke")
Step "report-html" 60 "0,6,7" @("report", "--format", "html", "--sample", "2")
Step "report-json" 60 "0,6,7" @("report", "--format", "json", "--sample", "2")
Step "vram" 30 "0" @("vram", "--preset", "llama-3.1-8b")
$gui = Join-Path $BinDir "gpu-doctor.exe"
if (Test-Path $gui) {
    $p = Start-Process -FilePath $gui -ArgumentList @("--screenshot", "`"$(Join-Path $Out 'gui.png')`"", "--frames", "30", "--size", "1280x800") -PassThru
    if (-not $p.WaitForExit(120000)) { $p.Kill() }
    Add-Content -Path $steps -Value "gui-screenshot`t$($p.ExitCode)`t0`t0" -Encoding utf8
}

# The Windows facts gpu-doctor captured, against Windows' own tools.
$rows = New-Object System.Collections.ArrayList
function Row([string]$what, $ours, $theirs) {
    $result = if ("$ours" -eq "$theirs") { "ok" } else { "DIFF"; $script:failed = $true }
    [void]$rows.Add([pscustomobject]@{ what = $what; gpu_doctor = "$ours"; windows = "$theirs"; result = $result })
}
$capJson = Get-Content -Raw -Path (Join-Path $cap "capture.json") -ErrorAction SilentlyContinue | ConvertFrom-Json
$w = $capJson.meta.windows
if ($w) {
    $controllers = Get-CimInstance Win32_VideoController
    foreach ($a in $w.adapters) {
        $c = $controllers | Where-Object { $_.PNPDeviceID -eq $a.instance_id } | Select-Object -First 1
        if (-not $c) { Row "adapter $($a.name): listed by Win32_VideoController" "yes" "no"; continue }
        Row "adapter $($a.name): driver version" $a.driver_version $c.DriverVersion
        Row "adapter $($a.name): problem code" $a.problem $c.ConfigManagerErrorCode
        $pd = Get-PnpDeviceProperty -InstanceId $a.instance_id -KeyName DEVPKEY_Device_PowerData -ErrorAction SilentlyContinue
        if ($pd -and $pd.Data) {
            # CM_POWER_DATA: PD_MostRecentPowerState at byte 4 (1 = D0 ... 4 = D3). Read after the
            # capture, so a GPU that woke in between shows as a difference worth a look.
            Row "adapter $($a.name): power state" $a.power_state ("D" + ($pd.Data[4] - 1))
        }
    }
    $ours = ($controllers | Where-Object { $_.PNPDeviceID -like "PCI\VEN_*" }).Count
    Row "display adapters found" $w.adapters.Count $ours
    $scheme = (& powercfg.exe /getactivescheme) -replace '.*([0-9a-fA-F]{8}-[0-9a-fA-F-]{27}).*', '$1'
    Row "active power plan" $w.power_scheme $scheme.ToLower()
    $svc = Get-ItemProperty -Path "HKLM:\SYSTEM\CurrentControlSet\Services\nvlddmkm" -ErrorAction SilentlyContinue
    if ($svc) { Row "DCH package (DCHUVen)" $w.dch ($null -ne $svc.DCHUVen) }
    $since = (Get-Date).AddDays(-7)
    $tdr = @(Get-WinEvent -FilterHashtable @{ LogName = "System"; ProviderName = "Display"; Id = 4101; StartTime = $since } -ErrorAction SilentlyContinue)
    if ($null -ne $w.tdr_events) { Row "TDR events (Display 4101) in 7 days" $w.tdr_events.Count $tdr.Count }
    $nt = Get-ItemProperty "HKLM:\SOFTWARE\Microsoft\Windows NT\CurrentVersion"
    Row "Windows build" $w.build $nt.CurrentBuildNumber
    $nvml = @(Get-ChildItem -Path "$env:SystemRoot\System32\nvml.dll", "$env:SystemRoot\System32\DriverStore\FileRepository\nv*\nvml.dll" -ErrorAction SilentlyContinue)
    Row "nvml.dll copies (System32 + driver store)" @($w.nvidia_files | Where-Object { $_.path -like "*nvml.dll" -and $_.path -notlike "*NVSMI*" }).Count $nvml.Count
} else {
    Row "capture.json has meta.windows" "no" "yes"
}
$rows | Format-Table -AutoSize | Out-String -Width 200 | Tee-Object -FilePath (Join-Path $Out "windows-compare.txt")

$py = Get-Command python.exe -ErrorAction SilentlyContinue
if ($py) {
    & python.exe (Join-Path $here "scripts\on_gpu_compare.py") $Out $Burn
    if ($LASTEXITCODE -ne 0) { $failed = $true }
} else {
    Write-Host "on-gpu: no python.exe: NVML vs nvidia-smi not compared (run scripts\on_gpu_compare.py $Out later)"
}
Write-Host "on-gpu: outputs in $Out"
if ($failed) { exit 1 } else { exit 0 }
