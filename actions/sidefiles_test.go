package actions_test

import "github.com/openshift/refresh-agent/actions"

func tempOf(p string) string    { t, _, _ := actions.SideFiles(p); return t }
func backupOf(p string) string  { _, b, _ := actions.SideFiles(p); return b }
func restoreOf(p string) string { _, _, r := actions.SideFiles(p); return r }
