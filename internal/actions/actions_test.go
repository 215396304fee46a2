package actions

import (
	"errors"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		list  []Action
		index int // -1 = valid
	}{
		{"all types valid", []Action{
			{Type: TypeWait, Milliseconds: 10}, {Type: TypeWait, Selector: "#a"},
			{Type: TypeClick, Selector: "a", All: true}, {Type: TypeWrite, Text: "x"},
			{Type: TypePress, Key: "Enter"}, {Type: TypePress, Key: "a"}, {Type: TypeScroll},
			{Type: TypeScroll, Direction: "up", Selector: "#s"},
			{Type: TypeScreenshot, FullPage: true, Quality: 50, Viewport: &Viewport{Width: 10, Height: 10}},
			{Type: TypeScrape}, {Type: TypeExecuteJavascript, Script: "1"},
			{Type: TypePDF}, {Type: TypePDF, PDFFormat: "Tabloid", Landscape: true, Scale: 2},
		}, -1},
		{"wait needs one form", []Action{{Type: TypeScrape}, {Type: TypeWait}}, 1},
		{"wait not both", []Action{{Type: TypeWait, Milliseconds: 1, Selector: "a"}}, 0},
		{"click needs selector", []Action{{Type: TypeClick}}, 0},
		{"write needs text", []Action{{Type: TypeWrite}}, 0},
		{"unknown key", []Action{{Type: TypePress, Key: "Warp"}}, 0},
		{"bad direction", []Action{{Type: TypeScroll, Direction: "left"}}, 0},
		{"bad quality", []Action{{Type: TypeScreenshot, Quality: 101}}, 0},
		{"bad viewport", []Action{{Type: TypeScreenshot, Viewport: &Viewport{Width: 0, Height: 5}}}, 0},
		{"empty script", []Action{{Type: TypeExecuteJavascript, Script: " "}}, 0},
		{"bad paper", []Action{{Type: TypePDF, PDFFormat: "B5"}}, 0},
		{"unknown type", []Action{{Type: "dance"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Validate(tt.list)
			var ae *Error
			switch {
			case tt.index < 0 && err != nil:
				t.Errorf("Validate: %v", err)
			case tt.index >= 0 && (!errors.As(err, &ae) || ae.Index != tt.index || ae.Type != tt.list[tt.index].Type):
				t.Errorf("Validate: %v, want error at %d", err, tt.index)
			}
		})
	}
}

func TestKeyFor(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Enter", "tab", "Escape", "Backspace", "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "PageUp", "PageDown", "Home", "End", "Space", "x", "é"} {
		if _, ok := keyFor(name); !ok {
			t.Errorf("keyFor(%q) unknown", name)
		}
	}
	if k, _ := keyFor("Space"); k != " " {
		t.Errorf("Space = %q", k)
	}
}

func TestPaperSize(t *testing.T) {
	t.Parallel()
	for format, want := range map[string][2]float64{"": {8.5, 11}, "A4": {8.27, 11.7}, "Ledger": {17, 11}, "a0": {33.1, 46.8}} {
		if got, ok := paperSize(format); !ok || got != want {
			t.Errorf("paperSize(%q) = %v, %v", format, got, ok)
		}
	}
}
