package exprlimit

import (
	"errors"
	"regexp/syntax"
	"strings"
	"testing"
)

func TestSelectorRefusesDeepNestingWithoutRecursing(t *testing.T) {
	// A million nested :not( ends the process with a stack overflow in
	// cascadia's parser; it must be refused before that parser sees it.
	n := 1_000_000
	bomb := strings.Repeat(":not(", n) + "a" + strings.Repeat(")", n)
	_, err := Selector(bomb)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Reason, "longer than 1024") {
		t.Fatalf("err = %v, want the length refusal", err)
	}
	deep := strings.Repeat(":not(", 17) + "a" + strings.Repeat(")", 17)
	if _, err := Selector(deep); !errors.As(err, &e) || !strings.Contains(e.Reason, "deeper than 16") {
		t.Fatalf("err = %v, want the nesting refusal", err)
	}
	ok := strings.Repeat(":not(", 16) + "a" + strings.Repeat(")", 16)
	if _, err := Selector(ok); err != nil {
		t.Fatalf("16 levels: %v", err)
	}
}

func TestSelectorNestedCostlyPseudoClasses(t *testing.T) {
	refused := []string{
		"div:has(p:has(a))",
		"div:HAS(span:contains('x'))",
		"li:matches(a(b)):has(:not(p:containsOwn(y)))",
		"section:has(:not(:has(img)))",
	}
	for _, s := range refused {
		if err := CheckSelector(s); err == nil || !strings.Contains(err.Error(), "inside one another") {
			t.Errorf("%q: err = %v, want refused", s, err)
		}
	}
	accepted := []string{
		"article, .main > p",
		"div:has(p):has(a)",
		"div:not(:has(img))",
		"p:contains('(((:has(')",
		`[title="(((((((((((((((((((("]`,
		`a\(\(\(\(\(\(\(\(\(\(\(\(\(\(\(\(\(\(`,
		"li:nth-child(2n+1):has(a)",
	}
	for _, s := range accepted {
		if _, err := Selector(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
}

func TestSelectorStillReportsSyntaxErrors(t *testing.T) {
	if _, err := Selector("div[["); err == nil {
		t.Fatal("want a parse error")
	}
}

func TestRegexpsBounds(t *testing.T) {
	var e *Error
	huge := strings.Repeat("(x+x+)+y|", 50_000) // 450 KB: 180 MB and seconds to compile
	if _, i, err := Regexps([]string{"^/blog", huge}); i != 1 || !errors.As(err, &e) || !strings.Contains(e.Reason, "longer than 4096") {
		t.Fatalf("i=%d err=%v, want the second refused for its length", i, err)
	}
	// 17 characters, 3 million instructions (about 130 MB) if compiled.
	if _, i, err := Regexps([]string{"(a{1000}|b){999}"}); i != 0 || err == nil {
		t.Fatalf("i=%d err=%v, want refused", i, err)
	}
	if _, i, err := Regexps([]string{"(.*a){1000}"}); i != 0 || !errors.As(err, &e) || !strings.Contains(e.Reason, "instructions") {
		t.Fatalf("i=%d err=%v, want refused for its program size", i, err)
	}
	// Each fits alone; together they do not.
	mid := "(.*a){500}" // about 2,500 instructions
	if _, _, err := Regexps([]string{mid}); err != nil {
		t.Fatalf("one: %v", err)
	}
	if _, i, err := Regexps([]string{mid, mid}); i != 1 || !errors.As(err, &e) {
		t.Fatalf("i=%d err=%v, want the second refused for the list's size", i, err)
	}
	// A long alternation of literal paths, as people write them, is small.
	words := make([]string, 200)
	for i := range words {
		words[i] = "section-" + strings.Repeat("x", i%7) + "-name"
	}
	res, _, err := Regexps([]string{"^/(" + strings.Join(words, "|") + ")/.*$", "^/docs/"})
	if err != nil || len(res) != 2 || !res[1].MatchString("/docs/a") {
		t.Fatalf("literal alternation: %v", err)
	}
	if _, i, err := Regexps([]string{"ok", "(unclosed"}); i != 1 || err == nil || !strings.Contains(err.Error(), "missing closing )") {
		t.Fatalf("i=%d err=%v, want the compiler's error for the second", i, err)
	}
}

func TestProgramSizeFollowsTheCompiler(t *testing.T) {
	for _, s := range []string{
		"^/blog/.*$",
		"(.*a){500}",
		"^/(" + strings.Repeat("[a-z]?", 150) + ")$",
		"(foo|bar|baz)+[0-9]{2,4}",
		"^/(w1section-x-name|w2section-xx-name|w3section-xxx-name)/",
		`\d{3}-\d{4}`,
	} {
		got, err := programSize(s)
		if err != nil {
			t.Fatal(err)
		}
		re, _ := syntax.Parse(s, syntax.Perl)
		prog, _ := syntax.Compile(re.Simplify())
		if want := len(prog.Inst); got < want/2 || got > want*2 {
			t.Errorf("%q: estimate %d, compiled %d", s, got, want)
		}
	}
	// Sized before compiling: 4 KB that would compile to half a
	// million instructions is refused for its size, not compiled.
	if _, _, err := Regexps([]string{strings.Repeat("(a{1000})", 450)}); err == nil || !strings.Contains(err.Error(), "instructions") {
		t.Fatalf("err = %v", err)
	}
}
