package scrape

import (
	"regexp"
	"strings"

	"github.com/firegate/firegate/internal/errcode"
)

// ErrPromptInjection: a json format with checkPromptInjection met a page
// that tries to steer the model; nothing was extracted.
var ErrPromptInjection = errcode.New("scrape: prompt injection detected", errcode.Forbidden,
	"SCRAPE_PROMPT_INJECTION_DETECTED", "")

// injectionPatterns match text written to steer a language model rather
// than to inform a reader: orders to drop earlier instructions, role
// switches, fake chat turns and chat-template tokens.
var injectionPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}\b(previous|prior|above|earlier|preceding|all|any|your|the)\b[^.\n]{0,20}\b(instructions?|prompts?|directions|rules|guidelines|context)\b`),
	regexp.MustCompile(`(?i)\byou are (now|no longer)\b[^.\n]{0,60}\b(mode|assistant|ai|model|bot|gpt|allowed|restricted)\b`),
	regexp.MustCompile(`(?i)\b(new|updated|real|actual) (system )?instructions?\s*:`),
	regexp.MustCompile(`(?i)\b(reveal|print|repeat|show|output)\b[^.\n]{0,20}\b(system prompt|your (instructions|prompt))\b`),
	regexp.MustCompile(`(?im)^\s*(#+\s*)?(system|assistant)\s*(message|prompt)?\s*:`),
	regexp.MustCompile(`(?i)<\|(im_start|im_end|system|assistant|user|endoftext)\|>|\[/?INST\]|<</?SYS>>|</?system>`),
	regexp.MustCompile(`(?i)\b(answer|respond|reply|output) (only|exclusively) with\b`),
}

// DetectPromptInjection returns the first passage of text that reads as an
// attempt to steer a language model, or "" when there is none.
func DetectPromptInjection(text string) string {
	for _, re := range injectionPatterns {
		if loc := re.FindStringIndex(text); loc != nil {
			return strings.TrimSpace(text[loc[0]:loc[1]])
		}
	}
	return ""
}

// guardPage checks the page before the model reads it. A flagged page
// aborts the request when a json format asked for checkPromptInjection;
// otherwise the model formats go on (the page is passed as data anyway)
// with a warning.
func guardPage(plan *llmPlan, md string, doc *Document) error {
	hit := DetectPromptInjection(md)
	if hit == "" {
		return nil
	}
	for _, f := range plan.formats {
		if f.Type == FormatJSON && f.CheckPromptInjection {
			return &errcode.Failure{Kind: ErrPromptInjection, Msg: "Prompt injection detected in the scraped content (\"" + clip(hit, 80) +
				"\"); extraction aborted. Retry without checkPromptInjection if this is a false positive."}
		}
	}
	addWarning(doc, "The page contains text that reads like instructions to a language model (\""+clip(hit, 80)+
		"\"); it was given to the model as data only.")
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "..."
}
