package allowlist

// Unit state actions: what a payload's unit entry asks of systemd besides its files, as the
// machine-config daemon applies it (writeUnits, deleteStaleData, enableUnits, disableUnits in
// machine-config-operator pkg/daemon/update.go; writeUnit in file_writers.go). Only a unit a
// NodeDisruptionPolicy unit rule names is ever acted on this way.
const (
	ActionEnable  Action = "Enable"  // enable the unit's [Install] symlinks (EnableUnitFiles)
	ActionDisable Action = "Disable" // remove them (DisableUnitFiles)
	ActionMask    Action = "Mask"    // link /etc/systemd/system/<unit> to /dev/null (MaskUnitFiles)
	ActionUnmask  Action = "Unmask"  // remove that link (UnmaskUnitFiles)
	ActionStop    Action = "Stop"    // stop the unit (its file is being removed)
	ActionStart   Action = "Start"   // start it (only ever to undo a Stop on rollback)
)

// StateAction reports whether a changes what a unit is (enabled, masked, running) rather than
// making it re-read its files.
func StateAction(a Action) bool {
	switch a {
	case ActionEnable, ActionDisable, ActionMask, ActionUnmask, ActionStop, ActionStart:
		return true
	}
	return false
}

// Inverse is the action that undoes a state action ("" for any other).
func Inverse(a Action) Action {
	return map[Action]Action{ActionEnable: ActionDisable, ActionDisable: ActionEnable, ActionMask: ActionUnmask,
		ActionUnmask: ActionMask, ActionStop: ActionStart, ActionStart: ActionStop}[a]
}
