// Package transport is the one HTTP client of the OpenAI-compatible servers ragbench talks to: the
// LLM (harness/llm), the embeddings endpoint (harness/retrieval/dense) and text-embeddings-inference's
// sparse encoder (harness/retrieval/sparse).
//
// Its one job is the exchange: where requests go (Resolve: base URL, model and API key, with the
// $OPENAI_BASE_URL, $OPENAI_MODEL and $OPENAI_API_KEY fallbacks), posting a JSON body (Client.Post),
// retrying what a retry may mend (Client.Retry, one Policy: 429, 5xx, timeouts and connection errors,
// with exponential backoff and the server's Retry-After), bounding the requests in flight, and keeping
// credentials out of errors and logs (RedactURL, Redactor).
//
// It builds no request body and decodes no answer: each client does that for its own endpoint.
package transport
