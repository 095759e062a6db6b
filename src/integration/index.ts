// Chat integration (SessionMemory, recall tools) lands here.
export {};
