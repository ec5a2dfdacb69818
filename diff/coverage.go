package diff

// How Diff treats every field of Ignition's 3.5 config types. A path names a field by its Go names
// from types.Config down ("Storage.Files.Contents.Source"): embedded structs are transparent, slices
// are entered. An entry covers the field and everything below it. TestFieldCoverage walks the types
// by reflection and fails on any field that is on neither list, so a field a new Ignition adds is
// either compared or ignored here, with its reason, before the build passes.

// Compared: fields a difference in which is a change.
var Compared = map[string]string{
	"KernelArguments": "as a whole: kind kernelArguments",
	"Ignition.Config": "merge and replace as a whole: kind ignition (the config would depend on others, unseen)",

	"Storage.Disks":       "each disk as a whole, by device: kind storage",
	"Storage.Raid":        "each array as a whole, by name: kind storage",
	"Storage.Filesystems": "each filesystem as a whole, by device: kind storage",
	"Storage.Luks":        "each volume as a whole, by name: kind storage",
	"Storage.Directories": "each directory as a whole, by path: kind directory",
	"Storage.Links":       "each link as a whole, by path: kind link",
	"Systemd.Units":       "each unit as a whole, by name: kind unit",
	"Passwd.Groups":       "each group as a whole, by name: kind passwd",
	"Passwd.Users":        "each user as a whole, by name: kind passwd; core's sshAuthorizedKeys apart, as kind sshKeys",

	"Storage.Files.Path":                  "the key: a path only on one side is an add or a remove",
	"Storage.Files.Contents.Source":       "by the decoded contents (detail contents)",
	"Storage.Files.Contents.Compression":  "by the decoded contents (detail contents)",
	"Storage.Files.Contents.Verification": "as written (detail contents.verification)",
	"Storage.Files.Contents.HTTPHeaders":  "as a whole (detail contents.httpHeaders)",
	"Storage.Files.Append":                "as a whole (detail append)",
	"Storage.Files.Mode":                  "effective mode, unset is 0644 (detail mode)",
	"Storage.Files.User":                  "effective owner, unset is root (detail owner)",
	"Storage.Files.Group":                 "effective group, unset is root (detail group)",
	"Storage.Files.Overwrite":             "effective value, unset is false (detail overwrite)",
}

// Ignored: fields whose difference changes nothing on a running node, each with the reason.
var Ignored = map[string]string{
	"Ignition.Version":  "always 3.5.0 after translation: the spec version a payload is written in is not node state",
	"Ignition.Proxy":    "steers only Ignition's own fetches at first boot; a refresh fetches nothing",
	"Ignition.Security": "TLS roots for Ignition's own fetches at first boot; a refresh fetches nothing",
	"Ignition.Timeouts": "timeouts of Ignition's own fetches at first boot; a refresh fetches nothing",
}
