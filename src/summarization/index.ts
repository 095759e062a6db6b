export { type ChatClient, type ChatRequest } from './ChatClient.js';
