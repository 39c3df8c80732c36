// Package extract finds the entities of a question and the knowledge triples of a sentence, which
// QuCo-RAG looks up in corpus statistics to decide when to retrieve.
//
// Two backends implement Extractor:
//
//   - Prompted asks an llm.Generator with prompt templates loaded from a file in the format of the
//     QuCo-RAG authors' prompt_templates.json (keys entity_extraction_prompt and
//     entity_extraction_prompt_for_question), as a raw completion prompt, as a chat message, or rendered
//     with the ChatML chat template of the authors' distilled 0.5B extractor; ParseList reads the
//     model's nested-list answers.
//   - Rules is model-free: entities are capitalised spans, quoted titles, numbers and dates
//     (harness/spans); triples come from a handful of subject–verb–object patterns.
//
// Config chooses and configures an extractor: backend rule (default) or llm; for llm the templates
// file, the format (raw, chat, chatml), the prompted options, and the extractor's own llm.Config (its
// model and endpoint, such as the authors' distilled 0.5B extractor or gpt-4o-mini, independent of the
// generator that answers). New(cfg, gen) builds the Extractor with a generator the caller owns;
// Open(cfg) also builds that generator from cfg.LLM and returns a Client to Close. In YAML:
//
//	extract:
//	  backend: llm
//	  templates: reference/quco-rag/prompt_templates.json
//	  format: chatml
//	  llm: {base_url: "http://127.0.0.1:8001/v1", model: QuCo-extractor-0.5B}
//
// The package is not a general information-extraction library and ships no prompt text: templates are
// always loaded from a path.
package extract
