#Requires -RunAsAdministrator
<#
.SYNOPSIS
Installs the gatehouse IIS module from this folder, or removes it (-Uninstall).

.DESCRIPTION
This folder, unpacked from the release zip (gatehouse-iis-<version>-win-x64.zip), is the
installation: the module (build\Release\gatehouse_iis.dll), Node as a DLL (libnode.dll), the
gatehouse addon (gatehouse_native.node), the in-server core (dist\, node_modules\) and the boot
script the module runs (binding\iis\boot.cjs). Put it where it is to stay, for example
C:\Program Files\gatehouse, then run this script from there in an elevated PowerShell.

Installing:
  - lets the IIS worker processes (IIS_IUSRS) read this folder;
  - adds build\Release to the machine PATH, where w3wp.exe finds libnode.dll;
  - registers "gatehouse" as a source of the Application event log, where the module writes
    why Node did not start or ended (its messages shown as written);
  - registers the module with IIS, for 64-bit application pools, enabled on no site;
  - enables it on each site named with -Site;
  - with -ConfigFile (and -LogFile), sets GATEHOUSE_CONFIG_FILE (GATEHOUSE_LOG_FILE) on the
    application pools of those sites;
  - restarts IIS (WAS and W3SVC): worker processes see the new PATH only after that
    (-NoRestart leaves the restart to you).
Running it again with other sites enables the module there too; nothing is added twice.

Secrets are not handled here: set the provider's client secret setting and
GATEHOUSE_ENCRYPTION_KEY as environment variables of the application pool yourself, and let the
pool's identity write the token store's directory and the log file's (see the README).

Uninstalling (-Uninstall) disables the module on every site, unregisters it and removes the
PATH entry and the event source, then restarts IIS. This folder, the configuration and the token store stay.

.PARAMETER Site
The sites to enable the module on, by name as IIS Manager shows them.

.PARAMETER ConfigFile
The gatehouse configuration (authsettingsV2 JSON) for the sites' application pools.

.PARAMETER LogFile
Where the module's Node writes its log (the worker process has no console).

.PARAMETER NoRestart
Do not restart IIS at the end.

.PARAMETER Uninstall
Remove the module from IIS instead of installing it.

.EXAMPLE
.\install.ps1 -Site "Default Web Site" -ConfigFile C:\gatehouse-data\auth.json -LogFile C:\gatehouse-data\gatehouse.log

.EXAMPLE
.\install.ps1 -Uninstall
#>
[CmdletBinding()]
param(
  [string[]] $Site = @(),
  [string] $ConfigFile,
  [string] $LogFile,
  [switch] $NoRestart,
  [switch] $Uninstall
)

$ErrorActionPreference = 'Stop'
$appcmd = Join-Path $env:windir 'system32\inetsrv\appcmd.exe'
$module = 'gatehouse'
$bin = Join-Path $PSScriptRoot 'build\Release'
$image = Join-Path $bin 'gatehouse_iis.dll'
$environmentKey = 'HKLM:\SYSTEM\CurrentControlSet\Control\Session Manager\Environment'
$eventSourceKey = "HKLM:\SYSTEM\CurrentControlSet\Services\EventLog\Application\$module"
# The .NET Framework's message file has "%1" for every event ID: the module's text, whole.
$eventMessageFile = '%SystemRoot%\Microsoft.NET\Framework64\v4.0.30319\EventLogMessages.dll'

# appcmd with its arguments as one array; a failure stops the script unless -Tolerate
# (removing what is not there is no failure).
function Invoke-AppCmd([string[]] $Arguments, [switch] $Tolerate) {
  $output = & $appcmd @Arguments
  if ($LASTEXITCODE -ne 0 -and -not $Tolerate) { throw "appcmd $($Arguments -join ' ') failed: $output" }
  $output
}

# The machine PATH as stored (%SystemRoot% and the like kept unexpanded).
function Get-MachinePath {
  @((Get-Item $environmentKey).GetValue('Path', '', 'DoNotExpandEnvironmentNames') -split ';' | Where-Object { $_ })
}

function Set-MachinePath([string[]] $Entries) {
  Set-ItemProperty -Path $environmentKey -Name Path -Value ($Entries -join ';') -Type ExpandString
}

function Restart-Iis {
  if ($NoRestart) {
    Write-Host 'IIS was not restarted (-NoRestart): restart WAS and W3SVC for the change to take effect.'
    return
  }
  Restart-Service WAS -Force
  Start-Service W3SVC
}

if (-not (Test-Path $appcmd)) { throw "IIS is not installed here (no $appcmd)" }

if ($Uninstall) {
  foreach ($name in (Invoke-AppCmd 'list', 'site', '/text:name')) {
    Invoke-AppCmd -Tolerate 'set', 'config', "$name/", '-section:system.webServer/modules', "/-[name='$module']", '/commit:apphost' | Out-Null
  }
  Invoke-AppCmd -Tolerate 'uninstall', 'module', $module | Out-Null
  Set-MachinePath (Get-MachinePath | Where-Object { $_ -ne $bin })
  if (Test-Path $eventSourceKey) { Remove-Item $eventSourceKey -Recurse }
  Restart-Iis
  Write-Host "gatehouse is removed from IIS. $PSScriptRoot, the configuration and the token store are left as they were."
  return
}

if (-not (Test-Path $image)) { throw "No module at ${image}; run this script from the folder unpacked from the release zip." }

icacls $PSScriptRoot /grant 'IIS_IUSRS:(OI)(CI)RX' /T /Q | Out-Null
if ($LASTEXITCODE -ne 0) { throw "icacls could not let IIS_IUSRS read $PSScriptRoot" }
if ((Get-MachinePath) -notcontains $bin) { Set-MachinePath ((Get-MachinePath) + $bin) }
if (-not (Test-Path $eventSourceKey)) { New-Item -Path $eventSourceKey | Out-Null }
Set-ItemProperty -Path $eventSourceKey -Name EventMessageFile -Value $eventMessageFile -Type ExpandString

# Registered once, enabled nowhere (/add:false); a new folder replaces the old one's image.
# 64-bit pools only: a 32-bit worker process cannot load a 64-bit DLL.
$registered = (Invoke-AppCmd 'list', 'config', '-section:system.webServer/globalModules') -match "name=`"$module`""
if ($registered) {
  Invoke-AppCmd 'set', 'config', '-section:system.webServer/globalModules', "/[name='$module'].image:$image", '/commit:apphost' | Out-Null
} else {
  Invoke-AppCmd 'install', 'module', "/name:$module", "/image:$image", '/add:false' | Out-Null
}
Invoke-AppCmd 'set', 'config', '-section:system.webServer/globalModules', "/[name='$module'].preCondition:bitness64", '/commit:apphost' | Out-Null

$pools = @()
$poolsSection = '-section:system.applicationHost/applicationPools'
foreach ($name in $Site) {
  # In applicationHost.config (not the site's web.config): removed first, so never listed twice.
  Invoke-AppCmd -Tolerate 'set', 'config', "$name/", '-section:system.webServer/modules', "/-[name='$module']", '/commit:apphost' | Out-Null
  Invoke-AppCmd 'set', 'config', "$name/", '-section:system.webServer/modules', "/+[name='$module']", '/commit:apphost' | Out-Null
  $pools += Invoke-AppCmd 'list', 'app', "$name/", '/text:applicationPool'
}

$settings = @{}
if ($ConfigFile) { $settings['GATEHOUSE_CONFIG_FILE'] = (Resolve-Path $ConfigFile).Path }
if ($LogFile) { $settings['GATEHOUSE_LOG_FILE'] = $LogFile }
foreach ($pool in ($pools | Sort-Object -Unique)) {
  if ((Invoke-AppCmd 'list', 'apppool', $pool, '/text:enable32BitAppOnWin64') -eq 'true') {
    Write-Warning "Application pool $pool runs 32-bit worker processes: the module will not load there."
  }
  foreach ($key in $settings.Keys) {
    Invoke-AppCmd -Tolerate 'set', 'config', $poolsSection, "/-[name='$pool'].environmentVariables.[name='$key']", '/commit:apphost' | Out-Null
    Invoke-AppCmd 'set', 'config', $poolsSection, "/+[name='$pool'].environmentVariables.[name='$key',value='$($settings[$key])']", '/commit:apphost' | Out-Null
  }
}

Restart-Iis
Write-Host "gatehouse is installed from $PSScriptRoot and enabled on: $(if ($Site) { $Site -join ', ' } else { 'no site yet (-Site)' })."
