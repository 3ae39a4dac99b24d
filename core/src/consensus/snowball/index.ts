export { Snowflake, topChoice, type SnowballParams } from './snowflake.js';
export { Snowball } from './snowball.js';
