package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"
)

// errUsage is returned by run after it printed a usage message to stderr
// (an unknown command, a bad flag): main exits 2, as flag does.
var errUsage = errors.New("usage")

// cliFlags holds the values of every sub-command's flags; each command
// declares the ones it takes.
type cliFlags struct {
	team        string
	id          string
	credits     int64
	amount      int64
	concurrency int
	rate        int
	zdr         bool
	zdrForced   bool
	catalog     bool
	terms       bool
	limit       int
}

// command is one sub-command of the binary: its words as typed, a line of
// help and its flags. The one list serves parsing and the usage text.
type command struct {
	name    string // "keys create"
	summary string
	flags   func(fs *flag.FlagSet, f *cliFlags) // nil: no flags
}

// commands lists the sub-commands in the order the usage shows them.
func commands() []command {
	team := func(fs *flag.FlagSet, f *cliFlags) {
		fs.StringVar(&f.team, "team", defaultTeam, "team `name`")
	}
	amount := func(fs *flag.FlagSet, f *cliFlags) {
		team(fs, f)
		fs.Int64Var(&f.amount, "amount", -1, "`credits` (required, not negative)")
	}
	return []command{
		{name: "serve", summary: "run the API server and the queue workers (the default command);\nconfigured from the environment: see 'server help config' and docs/configuration.md"},
		{name: "worker", summary: "run the queue workers only (crawl and batch pages, webhooks);\nPORT then serves /health, /ready and /metrics alone"},
		{name: "keys create", summary: "create an API key for a team (the team is created if new) and print it",
			flags: func(fs *flag.FlagSet, f *cliFlags) {
				team(fs, f)
				fs.Int64Var(&f.credits, "credits", -1, "give the team this many `credits` (default: leave its balance)")
			}},
		{name: "keys list", summary: "list a team's keys (prefixes only, never the keys)", flags: team},
		{name: "keys revoke", summary: "revoke a key", flags: func(fs *flag.FlagSet, f *cliFlags) {
			fs.StringVar(&f.id, "id", "", "key `id` as keys list prints it (required)")
		}},
		{name: "credits add", summary: "add credits to a team's balance (the team becomes limited)", flags: amount},
		{name: "credits set", summary: "set a team's balance (the team becomes limited)", flags: amount},
		{name: "credits unlimited", summary: "remove a team's credit limit", flags: team},
		{name: "credits show", summary: "print a team's balance", flags: team},
		{name: "limits set", summary: "set a team's concurrency and rate limits, zero data retention, catalog access and\nthird-party data terms (every flag not given goes back to its default)",
			flags: func(fs *flag.FlagSet, f *cliFlags) {
				team(fs, f)
				fs.IntVar(&f.concurrency, "concurrency", -1, "concurrent scrapes, 0 = unlimited (default: the server's TEAM_CONCURRENCY_LIMIT)")
				fs.IntVar(&f.rate, "rate-multiplier", -1, "multiplier of the base per-minute rates, 0 = unlimited (default: the server's TEAM_RATE_MULTIPLIER)")
				fs.BoolVar(&f.zdr, "zdr", false, "allow zero data retention requests")
				fs.BoolVar(&f.zdrForced, "zdr-forced", false, "force zero data retention on every request of the team (implies --zdr; agent and extract then answer 400)")
				fs.BoolVar(&f.catalog, "catalog", false, "enable catalog calls (POST /v2/scrape with catalog) and domainTools")
				fs.BoolVar(&f.terms, "accept-third-party-terms", false, "record that the team accepted the third-party data terms (calls to the operator's catalog tools)")
			}},
		{name: "feedback list", summary: "list the feedback teams gave on their results (POST /v2/feedback), newest first",
			flags: func(fs *flag.FlagSet, f *cliFlags) {
				fs.StringVar(&f.team, "team", "", "only this team's (`name`; default: every team's)")
				fs.IntVar(&f.limit, "limit", 50, "at most this many `rows`")
			}},
		{name: "migrate", summary: "apply the database migrations and exit"},
		{name: "version", summary: "print the version and exit"},
		{name: "help", summary: "print this usage, or with a command (help keys) that command's;\nhelp config lists the environment variables"},
	}
}

// findCommand matches args against the commands: the longest name whose
// words begin args. It returns the command and the arguments after it.
func findCommand(args []string) (command, []string, bool) {
	var best command
	n := 0
	for _, c := range commands() {
		words := strings.Fields(c.name)
		if len(words) > n && len(words) <= len(args) && equalWords(words, args[:len(words)]) {
			best, n = c, len(words)
		}
	}
	return best, args[n:], n > 0
}

func equalWords(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// isHelpFlag reports whether arg asks for help the way flag understands it.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
}

// printUsage writes the usage of the commands whose name begins with
// prefix (all when empty), each with its flags.
func printUsage(w io.Writer, prefix string) {
	fmt.Fprint(w, "Usage: server [COMMAND [SUB-COMMAND]] [FLAGS]\n\n")
	fmt.Fprint(w, "The scraping API server (v2 HTTP API) and its administration commands.\n")
	fmt.Fprint(w, "With no command, serve. Every command reads the environment for its\n")
	fmt.Fprint(w, "configuration (DATABASE_URL or DATA_DIR for the store, etc.: server help config).\n\nCommands:\n")
	for _, c := range commands() {
		if prefix != "" && c.name != prefix && !strings.HasPrefix(c.name, prefix+" ") {
			continue
		}
		printCommand(w, c)
	}
	fmt.Fprint(w, "\nRun 'server help COMMAND' or 'server COMMAND -h' for one command.\n")
}

// printCommand writes one command's name, help and flags.
func printCommand(w io.Writer, c command) {
	fmt.Fprintf(w, "\n  server %s\n", c.name)
	for _, line := range strings.Split(c.summary, "\n") {
		fmt.Fprintf(w, "      %s\n", line)
	}
	if c.flags == nil {
		return
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.flags(fs, &cliFlags{})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		def := ""
		if f.DefValue != "" && f.DefValue != "-1" && f.DefValue != "false" {
			def = fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(tw, "      --%s %s\t%s%s\n", f.Name, name, usage, def)
	})
	tw.Flush()
}

// parseCommand finds the command args name and parses its flags. It
// returns ok=false when run should stop: after help (err nil) or a usage
// error (errUsage, message already on stderr).
func parseCommand(args []string, stdout, stderr io.Writer) (command, cliFlags, bool, error) {
	var f cliFlags
	c, rest, found := findCommand(args)
	if !found {
		// A group named without its sub-command ("keys") or with an unknown one.
		for _, g := range commands() {
			if strings.HasPrefix(g.name, args[0]+" ") {
				if len(args) > 1 && isHelpFlag(args[1]) {
					printUsage(stdout, args[0])
					return c, f, false, nil
				}
				if len(args) == 1 {
					fmt.Fprintf(stderr, "server %s: a sub-command is required\n\n", args[0])
				} else {
					fmt.Fprintf(stderr, "server %s: unknown sub-command %q\n\n", args[0], args[1])
				}
				printUsage(stderr, args[0])
				return c, f, false, errUsage
			}
		}
		fmt.Fprintf(stderr, "server: unknown command %q\n\n", args[0])
		printUsage(stderr, "")
		return c, f, false, errUsage
	}
	fs := flag.NewFlagSet("server "+c.name, flag.ContinueOnError)
	var msg bytes.Buffer
	fs.SetOutput(&msg)
	fs.Usage = func() { printCommand(fs.Output(), c) }
	if c.flags != nil {
		c.flags(fs, &f)
	}
	err := fs.Parse(rest)
	if errors.Is(err, flag.ErrHelp) {
		msg.WriteTo(stdout)
		return c, f, false, nil
	}
	if err == nil && fs.NArg() > 0 {
		fmt.Fprintf(&msg, "unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		err = errUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "server %s: ", c.name)
		msg.WriteTo(stderr)
		return c, f, false, errUsage
	}
	return c, f, true, nil
}

// help serves "server help [COMMAND...]".
func help(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stdout, "")
		return nil
	}
	topic := strings.Join(args, " ")
	if topic == "config" {
		printSettings(stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == topic || strings.HasPrefix(c.name, topic+" ") {
			printUsage(stdout, topic)
			return nil
		}
	}
	fmt.Fprintf(stderr, "server help: unknown command %q\n\n", topic)
	printUsage(stderr, "")
	return errUsage
}

// printSettings writes the environment variables of the settings table,
// each with its default and what it does (docs/configuration.md says more).
func printSettings(w io.Writer) {
	fmt.Fprint(w, "Environment variables of every command (docs/configuration.md explains each):\n")
	for _, s := range (&Config{}).settings() {
		fmt.Fprintf(w, "\n  %s (default: %s)\n", s.name, plain(s.shownDefault()))
		for _, line := range wrap(plain(s.doc), 72) {
			fmt.Fprintf(w, "      %s\n", line)
		}
	}
}

// plain is markdown text without its code quotes.
func plain(md string) string { return strings.ReplaceAll(md, "`", "") }

// wrap cuts text into lines of at most width runes, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(w)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// version is the module version the binary was built from, with the VCS
// revision when the build recorded one.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev != "" {
		v += " " + rev + modified
	}
	return fmt.Sprintf("firegate %s (%s)", v, bi.GoVersion)
}
