-- A knowledge document read from a web page keeps the page's address.
ALTER TABLE knowledge_documents ADD COLUMN source_url text;
