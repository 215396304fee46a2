package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/firegate/firegate/internal/extracteval"
	"github.com/firegate/firegate/internal/htmlclean"
	"github.com/firegate/firegate/internal/markdown"
	"github.com/firegate/firegate/internal/pagemeta"
)

// ruleNames splits -without's value and checks each name against
// htmlclean's rules.
func ruleNames(v string) ([]string, error) {
	var names []string
	for _, n := range strings.Split(v, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	known := map[string]bool{}
	var all []string
	for _, r := range htmlclean.Rules() {
		known[r.Name] = true
		all = append(all, r.Name)
	}
	for _, n := range names {
		if !known[n] {
			return nil, fmt.Errorf("-without: unknown rule %q (the rules, -rules describes them: %s)", n, strings.Join(all, ", "))
		}
	}
	return names, nil
}

// writeRules prints htmlclean's rules that -without can switch off.
func writeRules(w io.Writer) {
	for _, r := range htmlclean.Rules() {
		fmt.Fprintf(w, "%s\n\tremoves: %s\n\twhy: %s\n\ttest: %s\n", r.Name, r.Removes, r.Why, r.Test)
	}
}

// withoutRules is the server's extractor with the htmlclean rules named
// switched off. The scrape engine takes no such option, so this runs the
// engine's steps for a corpus page itself (decode, parse, base URL, Clean
// with onlyMainContent, markdown); checkPipeline checks that with no rule
// off it scores every page as the engine does.
func withoutRules(without []string) extracteval.Extractor {
	return func(_ context.Context, p *extracteval.Page) (string, error) {
		raw := extracteval.DecodedHTML(p)
		parse := func() (*html.Node, error) { return html.Parse(strings.NewReader(raw)) }
		root, err := parse()
		if err != nil {
			return "", err
		}
		pageURL, err := url.Parse(p.URL)
		if err != nil {
			return "", err
		}
		cleaned, _, err := htmlclean.CleanReport(root, htmlclean.Options{
			BaseURL:         pagemeta.BaseURL(root, pageURL),
			OnlyMainContent: true,
			Reparse:         parse,
			Without:         without,
		})
		if err != nil {
			return "", err
		}
		md, err := markdown.Convert(cleaned, markdown.Options{})
		return extracteval.PlainText(md), err
	}
}

// sameScores counts the pages a and b (two evaluations of the same pages)
// score alike on.
func sameScores(a, b []extracteval.Result) int {
	n := 0
	for i := range a {
		if a[i].Score == b[i].Score && a[i].WithFound == b[i].WithFound && a[i].WithoutHit == b[i].WithoutHit && (a[i].Err == nil) == (b[i].Err == nil) {
			n++
		}
	}
	return n
}

// ablation is one corpus evaluated with all rules on (by the engine) and
// with some off.
type ablation struct {
	name string
	keep func(*extracteval.Page) bool
	on   []extracteval.Result
}

// checkPipeline evaluates withoutRules with no rule off on each corpus and
// fails when it does not score every page as the engine did: a difference
// in the ablations would then not be the rules'.
func checkPipeline(ctx context.Context, w io.Writer, corpora []corpus) error {
	for _, cp := range corpora {
		local := extracteval.Evaluate(ctx, cp.pages, withoutRules(nil))
		if same := sameScores(cp.rs, local); same != len(local) {
			return fmt.Errorf("%s: evalextract's own pipeline scores %d of %d pages differently from the engine; -without cannot be measured", cp.name, len(local)-same, len(local))
		}
	}
	fmt.Fprintf(w, "\n(evalextract's pipeline for -without scores every page as the engine does)\n")
	return nil
}

// ablations are the columns the rules' contributions are reported in.
func ablations(first corpus, second *corpus) []ablation {
	out := []ablation{
		{"WCXB dev", extracteval.Dev, first.rs},
		{"WCXB held-out", extracteval.Held, first.rs},
	}
	if second != nil {
		out = append(out, ablation{"readability-pages", extracteval.All, second.rs})
	}
	return out
}

// offResults evaluates the corpora with the rules named off, in the order
// of ablations' columns.
func offResults(ctx context.Context, first corpus, second *corpus, without []string) [][]extracteval.Result {
	off := extracteval.Evaluate(ctx, first.pages, withoutRules(without))
	out := [][]extracteval.Result{off, off}
	if second != nil {
		out = append(out, extracteval.Evaluate(ctx, second.pages, withoutRules(without)))
	}
	return out
}

// betterWorse counts the pages keep accepts that score better and worse
// (word F1) with all rules on than with some off.
func betterWorse(on, off []extracteval.Result, keep func(*extracteval.Page) bool) (better, worse int) {
	for i := range on {
		switch {
		case !keep(on[i].Page):
		case on[i].Score.F > off[i].Score.F:
			better++
		case on[i].Score.F < off[i].Score.F:
			worse++
		}
	}
	return better, worse
}

// contribution is what the rules switched off add to the word F1 of the
// pages keep accepts (all rules on minus them off), with the pages they
// make better and worse: "+0.00012 (5+ 1-)".
func contribution(on, off []extracteval.Result, keep func(*extracteval.Page) bool) string {
	d := extracteval.Summarize(on, keep)["all"].Mean().F - extracteval.Summarize(off, keep)["all"].Mean().F
	b, w := betterWorse(on, off, keep)
	return fmt.Sprintf("%+.5f (%d+ %d-)", d, b, w)
}

// snippetChange is, over the pages keep accepts, how many boilerplate
// snippets and how many content snippets the rules switched off remove:
// present with them off, absent with all rules on.
func snippetChange(on, off []extracteval.Result, keep func(*extracteval.Page) bool) (boiler, content int) {
	for i := range on {
		if keep(on[i].Page) {
			boiler += off[i].WithoutHit - on[i].WithoutHit
			content += off[i].WithFound - on[i].WithFound
		}
	}
	return boiler, content
}

// writeWithout prints, per corpus, the scores with all rules on and with
// the rules named off.
func writeWithout(w io.Writer, cols []ablation, offs [][]extracteval.Result, without []string) {
	fmt.Fprintf(w, "\nwithout %s: word F1 (precision / recall) with all rules on and with them off\n\n", strings.Join(without, ","))
	fmt.Fprintln(w, "| corpus | pages | all rules on | without | contribution (on - off; pages better+ worse-) | boilerplate snippets present on -> off |")
	fmt.Fprintln(w, "| - | -: | -: | -: | -: | -: |")
	for i, c := range cols {
		on := extracteval.Summarize(c.on, c.keep)["all"]
		off := extracteval.Summarize(offs[i], c.keep)["all"]
		mon, moff := on.Mean(), off.Mean()
		snip := "-"
		if on.Without > 0 {
			snip = fmt.Sprintf("%d -> %d of %d", on.WithoutFound, off.WithoutFound, on.Without)
		}
		fmt.Fprintf(w, "| %s | %d | %.4f (%.3f / %.3f) | %.4f (%.3f / %.3f) | %s | %s |\n", c.name, on.Pages,
			mon.F, mon.P, mon.R, moff.F, moff.P, moff.R, contribution(c.on, offs[i], c.keep), snip)
	}
}

// writeEachRule switches each rule off in turn and prints one row per rule:
// its contribution to the word F1 of each corpus (all rules on minus that
// rule off; negative when the pages score better without it) with the
// pages it makes better and worse, and on all of WCXB the boilerplate
// snippets and the content snippets it removes (net).
func writeEachRule(ctx context.Context, w io.Writer, first corpus, second *corpus) {
	cols := ablations(first, second)
	fmt.Fprintf(w, "\neach rule's contribution to word F1: all rules on minus that rule off (pages better+ worse-)\n\n| rule |")
	for _, c := range cols {
		fmt.Fprintf(w, " %s |", c.name)
	}
	fmt.Fprint(w, " WCXB boilerplate snippets it removes | WCXB content snippets it removes |\n| - |")
	for range cols {
		fmt.Fprint(w, " -: |")
	}
	fmt.Fprintln(w, " -: | -: |")
	for _, r := range htmlclean.Rules() {
		offs := offResults(ctx, first, second, []string{r.Name})
		fmt.Fprintf(w, "| %s |", r.Name)
		for i, c := range cols {
			fmt.Fprintf(w, " %s |", contribution(c.on, offs[i], c.keep))
		}
		boiler, content := snippetChange(first.rs, offs[0], extracteval.All)
		fmt.Fprintf(w, " %d | %d |\n", boiler, content)
	}
}
