package api

import "strconv"

// Count says n things with the noun in the right number ("1 node", "3 nodes", "1 change"), for the
// messages the agent, status and the controller print. noun is regular (plural adds "s").
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
