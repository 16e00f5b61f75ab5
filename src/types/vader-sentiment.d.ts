declare module 'vader-sentiment' {
  const vader: unknown;
  export default vader;
}
