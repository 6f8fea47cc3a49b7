package config

import (
	"strings"
)

// Markdown returns the README's tables of the keys: those with an effect (key, default,
// meaning), then those accepted with a warning (key, why it has no effect).
func Markdown() string {
	var b strings.Builder
	b.WriteString("| key | default | meaning |\n|---|---|---|\n")
	for _, k := range Keys() {
		if !k.HasEffect() {
			continue
		}
		def := k.Shown
		if def == "" && k.Default != "" {
			def = "`" + k.Default + "`"
		}
		b.WriteString("| " + markdownName(k) + " | " + def + " | " + k.Doc + " |\n")
	}
	b.WriteString("\nAccepted with a warning that they have no effect in pipesql:\n\n")
	b.WriteString("| keys | why they have no effect |\n|---|---|\n")
	// One row per reason, in the order of the table.
	var reasons []string
	byReason := map[string][]string{}
	for _, k := range Keys() {
		if k.HasEffect() {
			continue
		}
		if _, seen := byReason[k.NoEffect]; !seen {
			reasons = append(reasons, k.NoEffect)
		}
		byReason[k.NoEffect] = append(byReason[k.NoEffect], markdownName(k))
	}
	for _, r := range reasons {
		b.WriteString("| " + strings.Join(byReason[r], ", ") + " | " + r + " |\n")
	}
	return b.String()
}

func markdownName(k *Key) string {
	s := "`" + k.Name + "`"
	for _, a := range k.Aliases {
		s += " (`" + a + "`)"
	}
	return s
}
