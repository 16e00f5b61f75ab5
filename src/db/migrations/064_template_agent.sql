-- A template's choices of its calls' voice, LLM model and temperature, and speech-to-text language
-- (docs/templates.md): {voice?, llm_model?, temperature?, stt_language?}. NULL: the service defaults.
ALTER TABLE templates ADD COLUMN agent jsonb;
