; The Windows installer: per user, no administrator rights. Installs into
; %LOCALAPPDATA%\Programs\gpu-doctor, adds a Start-menu entry and an entry in "Installed apps"
; (with an uninstaller), and optionally puts gpu-doctor-cli on the user's PATH.
;
; Built by packaging/build.sh:
;   makensis -DVERSION=0.1.0 -DSRC=<folder with the .exe files, .ico, README and licences> \
;            -DOUTFILE=<setup .exe> packaging/windows/installer.nsi
; Silent: setup.exe /S [/D=C:\path]   (the PATH option is off unless chosen in the dialog)

Unicode true
; A 64-bit installer for a 64-bit app (it also runs where Windows has no 32-bit layer).
Target amd64-unicode
!include "MUI2.nsh"
!include "LogicLib.nsh"
!include "WinMessages.nsh"
!include "FileFunc.nsh"
!include "StrFunc.nsh"
${StrStr}
${UnStrRep}

!ifndef VERSION | SRC | OUTFILE
  !error "usage: makensis -DVERSION=x.y.z -DSRC=DIR -DOUTFILE=FILE installer.nsi"
!endif

!define APP "gpu-doctor"
!define UNINST_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${APP}"
!define APP_KEY "Software\${APP}"

Name "${APP} ${VERSION}"
OutFile "${OUTFILE}"
RequestExecutionLevel user
InstallDir "$LOCALAPPDATA\Programs\${APP}"
InstallDirRegKey HKCU "${APP_KEY}" "InstallDir"
SetCompressor /SOLID lzma
BrandingText "${APP} ${VERSION}"

VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${APP}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${APP} ${VERSION} setup"
VIAddVersionKey "LegalCopyright" "Copyright 2026 The gpu-doctor developers (MIT OR Apache-2.0)"

!define MUI_ICON "${SRC}\gpu-doctor.ico"
!define MUI_UNICON "${SRC}\gpu-doctor.ico"
!define MUI_COMPONENTSPAGE_NODESC
!insertmacro MUI_PAGE_COMPONENTS
!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!define MUI_FINISHPAGE_RUN "$INSTDIR\gpu-doctor.exe"
!define MUI_FINISHPAGE_RUN_TEXT "Start gpu-doctor now"
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Section "gpu-doctor (the app and gpu-doctor-cli)" SecMain
  SectionIn RO
  SetOutPath "$INSTDIR"
  File "${SRC}\gpu-doctor.exe"
  File "${SRC}\gpu-doctor-cli.exe"
  File "${SRC}\README.txt"
  File "${SRC}\LICENSE-MIT.txt"
  File "${SRC}\LICENSE-APACHE.txt"
  File "${SRC}\LICENSE-OFL-NotoSansSC.txt"
  File "${SRC}\LICENSE-emoji-icon-font.txt"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortcut "$SMPROGRAMS\${APP}.lnk" "$INSTDIR\gpu-doctor.exe" "" "$INSTDIR\gpu-doctor.exe" 0
  WriteRegStr HKCU "${APP_KEY}" "InstallDir" "$INSTDIR"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayName" "${APP}"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINST_KEY}" "Publisher" "The gpu-doctor developers"
  WriteRegStr HKCU "${UNINST_KEY}" "DisplayIcon" "$INSTDIR\gpu-doctor.exe"
  WriteRegStr HKCU "${UNINST_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINST_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINST_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINST_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  WriteRegDWORD HKCU "${UNINST_KEY}" "EstimatedSize" $0
SectionEnd

Section /o "Add gpu-doctor-cli to my PATH (for terminals and scripts)" SecPath
  ReadRegStr $0 HKCU "Environment" "Path"
  ${StrStr} $1 ";$0;" ";$INSTDIR;"
  ${If} $1 == ""
    ${If} $0 == ""
      WriteRegExpandStr HKCU "Environment" "Path" "$INSTDIR"
    ${Else}
      WriteRegExpandStr HKCU "Environment" "Path" "$0;$INSTDIR"
    ${EndIf}
    WriteRegDWORD HKCU "${APP_KEY}" "AddedToPath" 1
    SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
  ${EndIf}
SectionEnd

Section "Uninstall"
  ReadRegDWORD $0 HKCU "${APP_KEY}" "AddedToPath"
  ${If} $0 == 1
    ReadRegStr $1 HKCU "Environment" "Path"
    ${UnStrRep} $1 ";$1;" ";$INSTDIR;" ";"
    ; Drop the separators added above at both ends.
    StrCpy $1 $1 "" 1
    StrCpy $1 $1 -1
    WriteRegExpandStr HKCU "Environment" "Path" "$1"
    SendMessage ${HWND_BROADCAST} ${WM_SETTINGCHANGE} 0 "STR:Environment" /TIMEOUT=5000
  ${EndIf}
  Delete "$SMPROGRAMS\${APP}.lnk"
  Delete "$INSTDIR\gpu-doctor.exe"
  Delete "$INSTDIR\gpu-doctor-cli.exe"
  Delete "$INSTDIR\README.txt"
  Delete "$INSTDIR\LICENSE-MIT.txt"
  Delete "$INSTDIR\LICENSE-APACHE.txt"
  Delete "$INSTDIR\LICENSE-OFL-NotoSansSC.txt"
  Delete "$INSTDIR\LICENSE-emoji-icon-font.txt"
  Delete "$INSTDIR\uninstall.exe"
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINST_KEY}"
  DeleteRegKey HKCU "${APP_KEY}"
SectionEnd
