package offline

import (
	"regexp"
	"strings"

	"github.com/ragbench/ragbench/harness/llm"
)

// Prompt is what the reader takes from a prompt: the question, the context passages and the answer
// text already generated.
type Prompt struct {
	// Question is the question to answer.
	Question string
	// Passages are the context passages, in prompt order.
	Passages []string
	// Partial is the text after the final "Answer:" (or the trailing assistant message): the answer
	// generated so far, which the reader continues.
	Partial string
}

var (
	docRE      = regexp.MustCompile(`^\s*(?:doc)?\[(\d+)\]\s?(.*)$`)
	questionRE = regexp.MustCompile(`(?i)^\s*question\s*:\s*(.*)$`)
	answerRE   = regexp.MustCompile(`(?i)^\s*answer\s*:\s?(.*)$`)
	labelRE    = regexp.MustCompile(`(?i)^\s*(?:context|passage|document|background|evidence)s?\s*(?:\d+)?\s*:\s*(.*)$`)
)

// ParsePrompt reads a raw completions prompt. The question is on the last "Question:" line, or
// without one the last non-empty line; the partial answer follows "Answer:" after it. Context
// passages are the "[n]" / "doc[n]" blocks before the question or, when there are none, the other
// paragraphs that are neither exemplars ("Question:"/"Answer:" pairs), headers (short lines ending in
// ':') nor format instructions.
func ParsePrompt(prompt string) Prompt {
	lines := strings.Split(strings.ReplaceAll(prompt, "\r\n", "\n"), "\n")
	qi := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if questionRE.MatchString(lines[i]) {
			qi = i
			break
		}
	}
	var p Prompt
	if qi >= 0 {
		p.Question = strings.TrimSpace(questionRE.FindStringSubmatch(lines[qi])[1])
		for j := qi + 1; j < len(lines); j++ {
			if m := answerRE.FindStringSubmatch(lines[j]); m != nil {
				p.Partial = strings.Join(append([]string{m[1]}, lines[j+1:]...), "\n")
				break
			}
		}
	} else {
		qi = len(lines) - 1
		for qi >= 0 && strings.TrimSpace(lines[qi]) == "" {
			qi--
		}
		if qi < 0 {
			return p
		}
		p.Question = lastQuestion(lines[qi])
		if rest := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(lines[qi]), p.Question)); rest != "" {
			// The question line also held context before the question.
			lines = append(append([]string(nil), lines[:qi]...), rest, "")
			qi = len(lines) - 1
		}
	}
	p.Passages = passages(lines[:max(qi, 0)])
	return p
}

// lastQuestion returns the last sentence of line that ends in '?', or the whole line.
func lastQuestion(line string) string {
	line = strings.TrimSpace(line)
	if !strings.HasSuffix(line, "?") {
		return line
	}
	body := line[:len(line)-1]
	cut := -1
	for _, sep := range []string{". ", "! ", "? ", ": "} {
		if i := strings.LastIndex(body, sep); i > cut {
			cut = i + len(sep)
		}
	}
	if cut < 0 {
		return line
	}
	return strings.TrimSpace(line[cut:])
}

// passages finds the context passages in the lines before the question.
func passages(lines []string) []string {
	var out []string
	var cur []string
	inDoc := false
	flush := func() {
		if s := strings.TrimSpace(strings.Join(cur, " ")); s != "" {
			out = append(out, s)
		}
		cur = cur[:0]
	}
	for _, l := range lines {
		switch {
		case docRE.MatchString(l):
			flush()
			cur = append(cur, docRE.FindStringSubmatch(l)[2])
			inDoc = true
		case strings.TrimSpace(l) == "" || questionRE.MatchString(l) || answerRE.MatchString(l) || isInstruction(l):
			flush()
			inDoc = false
		case inDoc:
			cur = append(cur, l)
		}
	}
	flush()
	if len(out) > 0 {
		return out
	}
	// No numbered documents: every paragraph outside the exemplars.
	inExemplar := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case questionRE.MatchString(l):
			flush()
			inExemplar = true
		case answerRE.MatchString(l):
			flush()
			inExemplar = false // the answer line closes the exemplar
		case t == "":
			flush()
			inExemplar = false
		case inExemplar || isInstruction(l):
		case labelRE.MatchString(l):
			flush()
			if rest := strings.TrimSpace(labelRE.FindStringSubmatch(l)[1]); rest != "" {
				cur = append(cur, rest)
			}
		default:
			cur = append(cur, t)
		}
	}
	flush()
	return out
}

// isInstruction reports whether a line is a header ("Context:") or a format instruction rather than
// context.
func isInstruction(l string) bool {
	t := strings.ToLower(strings.TrimSpace(l))
	if strings.HasSuffix(t, ":") && len(strings.Fields(t)) <= 12 {
		return true
	}
	if strings.Contains(t, "answer") && (strings.Contains(t, "format") || strings.Contains(t, "following question") ||
		strings.Contains(t, "the example") || strings.Contains(t, "so the answer is")) {
		return true
	}
	return strings.HasPrefix(t, "please ") || strings.HasPrefix(t, "your task") || strings.HasPrefix(t, "don't ") ||
		strings.HasPrefix(t, "avoid ") || strings.HasPrefix(t, "answer with") || strings.HasPrefix(t, "answer yes")
}

// PromptOf returns the parsed prompt of a request: the raw prompt for completions; for chat, the
// system messages and the last user message (earlier turns are exemplars), with a trailing assistant
// message as the partial answer.
func PromptOf(req llm.Request) Prompt {
	if len(req.Messages) == 0 {
		return ParsePrompt(req.Prompt)
	}
	msgs := req.Messages
	partial := ""
	if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" {
		partial = msgs[n-1].Content
		msgs = msgs[:n-1]
	}
	// Earlier user/assistant turns are few-shot exemplars: keep the system messages and the last user
	// message.
	last := -1
	for i, m := range msgs {
		if m.Role != "system" {
			last = i
		}
	}
	var b strings.Builder
	for i, m := range msgs {
		if m.Role != "system" && i != last {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(m.Content)
	}
	p := ParsePrompt(b.String())
	if partial != "" {
		p.Partial = partial
	}
	return p
}
