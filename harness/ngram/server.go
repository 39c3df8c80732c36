package ngram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Server limits, following Infini-gram's public API where it has one.
const (
	MaxQueryChars     = 1000
	MaxClausesPerCNF  = 4
	MaxTermsPerClause = 4
	MaxDiffTokensAPI  = 1000
	MaxClauseFreqAPI  = 500000
	MaxSupportAPI     = 1000
)

// Server serves an index over Infini-gram's JSON API: POST / with {index, query_type, query | query_ids,
// max_diff_tokens, max_clause_freq, max_support}.
type Server struct {
	Index         *Index
	Name          string        // the index name requests must give ("" accepts any)
	Mode          Mode          // semantics of CNF counts
	MaxConcurrent int           // queries at once; more get 429 (default 2×GOMAXPROCS-ish 8)
	Timeout       time.Duration // per-query deadline; past it, 503 (default 5s)
	MaxBody       int64         // request-size limit in bytes; above it, 413 (default 64 KiB)
	// Token, when set, is the bearer token every request must carry ("Authorization: Bearer
	// TOKEN"); others get 401. Set it whenever the server listens beyond the loopback interface.
	Token string

	sem chan struct{}
}

// apiRequest is the request body; pointers tell absent fields from zero ones.
type apiRequest struct {
	Index         *string         `json:"index"`
	Corpus        *string         `json:"corpus"`
	QueryType     *string         `json:"query_type"`
	Query         *string         `json:"query"`
	QueryIDs      json.RawMessage `json:"query_ids"`
	MaxDiffTokens *int64          `json:"max_diff_tokens"`
	MaxClauseFreq *int64          `json:"max_clause_freq"`
	MaxSupport    *int64          `json:"max_support"`
}

type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler {
	if s.MaxConcurrent <= 0 {
		s.MaxConcurrent = 8
	}
	if s.Timeout <= 0 {
		s.Timeout = 5 * time.Second
	}
	if s.MaxBody <= 0 {
		s.MaxBody = 64 << 10
	}
	s.sem = make(chan struct{}, s.MaxConcurrent)
	return http.HandlerFunc(s.serve)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "use POST with a JSON body"})
		return
	}
	select {
	case s.sem <- struct{}{}:
		defer func() { <-s.sem }()
	default:
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "server busy: too many concurrent queries; retry later"})
		return
	}
	if s.Token != "" && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+s.Token)) != 1 {
		w.Header().Set("WWW-Authenticate", "Bearer")
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing or wrong bearer token"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, s.MaxBody)
	var req apiRequest
	dec := json.NewDecoder(r.Body)
	err := dec.Decode(&req)
	if err == nil {
		var extra json.RawMessage
		if e := dec.Decode(&extra); !errors.Is(e, io.EOF) {
			err = errors.New("data after the JSON object")
			var mbe *http.MaxBytesError
			if errors.As(e, &mbe) {
				err = e
			}
		}
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"error": fmt.Sprintf("request body larger than %d bytes", s.MaxBody)})
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "malformed JSON request: " + err.Error()})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.Timeout)
	defer cancel()
	start := time.Now()
	out, err := s.process(ctx, &req)
	if err != nil {
		var he *httpError
		switch {
		case errors.As(err, &he):
			writeJSON(w, he.code, map[string]string{"error": he.msg})
		case errors.Is(err, context.DeadlineExceeded):
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": fmt.Sprintf("query exceeded the %s deadline", s.Timeout)})
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		}
		return
	}
	out["latency"] = float64(time.Since(start).Microseconds()) / 1000
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) process(ctx context.Context, req *apiRequest) (map[string]any, error) {
	idx := req.Index
	if req.Corpus != nil {
		idx = req.Corpus
	}
	if idx == nil {
		return nil, badRequest("Missing required field: 'index'")
	}
	if s.Name != "" && *idx != s.Name {
		return nil, badRequest("Invalid index: %s", *idx)
	}
	if req.QueryType == nil {
		return nil, badRequest("Missing required field: 'query_type'")
	}
	qt := *req.QueryType
	switch qt {
	case "count", "prob", "ntd":
	default:
		return nil, badRequest("Invalid query_type: %s (this server answers count, prob and ntd)", qt)
	}
	hasIDs := len(req.QueryIDs) > 0 && string(req.QueryIDs) != "null"
	if (req.Query == nil) == !hasIDs {
		return nil, badRequest("Exactly one of query and query_ids must be present!")
	}
	mdt := int64(DefaultMaxDiffTokens)
	if req.MaxDiffTokens != nil {
		mdt = *req.MaxDiffTokens
		if mdt < 1 || mdt > MaxDiffTokensAPI {
			return nil, badRequest("max_diff_tokens must be an integer in [1, %d]!", MaxDiffTokensAPI)
		}
	}
	mcf := int64(DefaultMaxClauseFreq)
	if req.MaxClauseFreq != nil {
		mcf = *req.MaxClauseFreq
		if mcf < 1 || mcf > MaxClauseFreqAPI {
			return nil, badRequest("max_clause_freq must be an integer in [1, %d]!", MaxClauseFreqAPI)
		}
	}
	if req.MaxSupport != nil && (*req.MaxSupport < 1 || *req.MaxSupport > MaxSupportAPI) {
		return nil, badRequest("max_support must be an integer in [1, %d]!", MaxSupportAPI)
	}

	// Resolve the query to ids: a simple query or a CNF.
	var simple []uint32
	var cnf [][][]uint32
	isCNF := false
	unknown := false
	if req.Query != nil {
		q := *req.Query
		if len(q) > MaxQueryChars {
			return nil, badRequest("Please limit your input to <= %d characters!", MaxQueryChars)
		}
		if !s.Index.HasVocab() {
			return nil, badRequest("this index has no vocabulary: give query_ids")
		}
		if IsCNF(q) {
			isCNF = true
			parsed := ParseCNF(q)
			var err error
			if cnf, err = s.Index.TextCNF(parsed); err != nil {
				return nil, badRequest("%v", err)
			}
		} else {
			ids, known, err := s.Index.TokenIDs(nil, q)
			if err != nil {
				return nil, badRequest("%v", err)
			}
			simple, unknown = ids, !known
		}
	} else {
		var flat []int64
		var nested [][][]int64
		if err := json.Unmarshal(req.QueryIDs, &flat); err == nil {
			for _, v := range flat {
				id, err := s.checkID(v)
				if err != nil {
					return nil, err
				}
				simple = append(simple, id)
			}
		} else if err := json.Unmarshal(req.QueryIDs, &nested); err == nil {
			isCNF = true
			for _, c := range nested {
				var cl [][]uint32
				for _, term := range c {
					var ids []uint32
					for _, v := range term {
						id, err := s.checkID(v)
						if err != nil {
							return nil, err
						}
						ids = append(ids, id)
					}
					cl = append(cl, ids)
				}
				cnf = append(cnf, cl)
			}
		} else {
			return nil, badRequest("query_ids must be a list of integers, or a triply-nested list of integers!")
		}
	}
	n := len(simple)
	for _, c := range cnf {
		for _, t := range c {
			n += len(t)
		}
	}
	if n > MaxQueryTokens {
		return nil, badRequest("Please limit your input to <= %d tokens!", MaxQueryTokens)
	}
	if isCNF {
		if len(cnf) > MaxClausesPerCNF {
			return nil, badRequest("Please enter at most %d disjunctive clauses!", MaxClausesPerCNF)
		}
		for _, c := range cnf {
			if len(c) > MaxTermsPerClause {
				return nil, badRequest("Please enter at most %d terms in each disjunctive clause!", MaxTermsPerClause)
			}
			for _, t := range c {
				if t != nil && len(t) == 0 {
					return nil, badRequest("a CNF term is empty")
				}
			}
		}
	}

	out := map[string]any{}
	switch {
	case qt == "count" && isCNF:
		res, err := s.Index.CountCNF(ctx, cnf, CNFOptions{Mode: s.Mode, MaxDiffTokens: int(mdt), MaxClauseFreq: uint64(mcf)})
		if err != nil {
			return nil, err
		}
		out["count"], out["approx"] = res.Count, res.Approx
		out["token_ids"], out["tokens"] = cnf, s.cnfTokens(cnf)
		return out, nil
	case isCNF:
		return nil, badRequest("query_type %s does not take a CNF query", qt)
	}
	out["token_ids"], out["tokens"] = simple, s.tokens(simple)
	if req.Query != nil {
		// Unknown tokens show as id -1 with their text.
		ids := make([]int64, len(simple))
		words := s.Index.queryWords(*req.Query)
		for i, id := range simple {
			ids[i] = int64(id)
			if _, ok := s.Index.vocab[words[i]]; !ok {
				ids[i] = -1
			}
		}
		out["token_ids"], out["tokens"] = ids, words
	}
	switch qt {
	case "count":
		c := uint64(0)
		if !unknown {
			c = s.Index.CountIDs(simple)
		}
		out["count"], out["approx"] = c, false
	case "prob":
		if len(simple) == 0 {
			return nil, badRequest("Please provide a non-empty query!")
		}
		p, pc, cc := -1.0, uint64(0), uint64(0)
		if !unknown {
			p, pc, cc = s.Index.Prob(simple[:len(simple)-1], simple[len(simple)-1])
		}
		out["prob"], out["prompt_cnt"], out["cont_cnt"] = p, pc, cc
	case "ntd":
		if len(simple) == 0 {
			return nil, badRequest("Please provide a non-empty query!")
		}
		maxSupport := uint64(MaxSupportAPI)
		if req.MaxSupport != nil {
			maxSupport = uint64(*req.MaxSupport)
		}
		res := map[string]any{}
		var total uint64
		approx := false
		if !unknown {
			var dist []NextToken
			dist, total, approx = s.Index.NTDSample(simple, maxSupport)
			for _, d := range dist {
				res[strconv.FormatUint(uint64(d.ID), 10)] = map[string]any{"cont_cnt": d.Count, "prob": d.Prob, "token": d.Token}
			}
		}
		out["prompt_cnt"], out["result_by_token_id"], out["approx"] = total, res, approx
	}
	return out, nil
}

func (s *Server) checkID(v int64) (uint32, error) {
	if v < 0 || v > int64(s.Index.Sep()) {
		return 0, badRequest("Some item(s) in your query_ids are out-of-range!")
	}
	if uint32(v) == s.Index.Sep() {
		return 0, badRequest("query_ids holds the document separator id %d, which is not a token", v)
	}
	if s.Index.HasVocab() && v >= int64(len(s.Index.words)) && uint32(v) != s.Index.Sep() {
		return 0, badRequest("Some item(s) in your query_ids are out-of-range!")
	}
	return uint32(v), nil
}

func (s *Server) tokens(ids []uint32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = s.Index.Word(id)
	}
	return out
}

func (s *Server) cnfTokens(cnf [][][]uint32) [][][]string {
	out := make([][][]string, len(cnf))
	for i, c := range cnf {
		for _, t := range c {
			out[i] = append(out[i], s.tokens(t))
		}
	}
	return out
}
